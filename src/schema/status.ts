import { Type, type Static } from '@sinclair/typebox'

/** One partition of the events topic as the node answering GET /api/status sees it. */
export const PartitionStatus = Type.Object({
  partition: Type.Integer({ minimum: 0 }),
  /** query address of the node that owns it */
  owner: Type.String(),
  /** next offset the owner will fold */
  offset: Type.Integer({ minimum: 0 }),
  /** one past the last durable record */
  end: Type.Integer({ minimum: 0 }),
  lag: Type.Integer({ minimum: 0 }),
  hot_sessions: Type.Integer({ minimum: 0 }),
  goals: Type.Integer({ minimum: 0 }),
  conversions: Type.Integer({ minimum: 0 }),
  state_bytes: Type.Integer({ minimum: 0 }),
})
export type PartitionStatus = Static<typeof PartitionStatus>

export const MemberStatus = Type.Object({
  url: Type.String(),
  partitions: Type.Array(Type.Integer({ minimum: 0 })),
  /** true for the node that answered */
  self: Type.Boolean(),
})
export type MemberStatus = Static<typeof MemberStatus>

/** GET /api/status (admin only): the group, who owns which partition, and how far each got. */
export const StatusAnswer = Type.Object({
  node: Type.String(),
  log: Type.Union([Type.Literal('embedded'), Type.Literal('kafka')]),
  members: Type.Array(MemberStatus),
  partitions: Type.Array(PartitionStatus),
})
export type StatusAnswer = Static<typeof StatusAnswer>
