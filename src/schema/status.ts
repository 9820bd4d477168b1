import { Type, type Static } from '@sinclair/typebox'

/**
 * Why a partition's folding stopped: what failed, and where in the log. A partition stopped at a
 * record batch that cannot be read stays there (GOALPOST_KAFKA_UNREADABLE_BATCH=stop) until the
 * batch reads; one whose consumer or task failed is restarted with backoff.
 */
export const PartitionStop = Type.Object({
  reason: Type.String(),
  topic: Type.String(),
  partition: Type.Integer({ minimum: 0 }),
  /** where folding stands: the first offset not folded (an unreadable batch's first offset) */
  offset: Type.Integer({ minimum: 0 }),
  /** when it stopped, ISO 8601 */
  since: Type.String(),
})
export type PartitionStop = Static<typeof PartitionStop>

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
  /** `running`, or `stopped` (see `stopped`); absent from nodes older than the field */
  folding: Type.Optional(Type.Union([Type.Literal('running'), Type.Literal('stopped')])),
  /** why and where folding stopped; null while it runs */
  stopped: Type.Optional(Type.Union([PartitionStop, Type.Null()])),
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
