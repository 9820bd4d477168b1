/**
 * Group membership on one machine: a group of one that owns every partition of the topic from
 * the moment it joins until it leaves. Delivery per partition is a plain tail subscription from
 * the offset the listener's restored state asks for.
 */
import type { GroupListener, GroupMember, MemberInfo, Membership, RecordHandler } from '../types.js'
import type { TailSubscription } from './subscription.js'

/** what a lone member needs of the log it folds */
export interface SoloLog {
  partitionsOf(topic: string): number
  beginOffset(topic: string, partition: number): Promise<number>
  subscribe(topic: string, partition: number, from: number, handler: RecordHandler): TailSubscription
}

export async function joinAlone(log: SoloLog, topic: string, member: MemberInfo, listener: GroupListener): Promise<Membership> {
  const partitions = Array.from({ length: log.partitionsOf(topic) }, (_, p) => p)
  const from = await listener.assigned(partitions)
  const subs = new Map<number, TailSubscription>()
  for (const p of partitions) {
    const start = from.get(p) ?? (await log.beginOffset(topic, p))
    const sub = log.subscribe(topic, p, start, (records) => listener.records(p, records))
    subs.set(p, sub)
    // a handler failure stops this subscription; close() reports the error
    void watchFailure(sub, p, listener)
  }
  let left: Promise<void> | undefined
  return {
    async members(): Promise<GroupMember[]> {
      return [{ url: member.url, partitions: left ? [] : partitions, self: true }]
    },
    owned: () => (left ? [] : partitions),
    leave(): Promise<void> {
      left ??= (async () => {
        await Promise.allSettled([...subs.values()].map((s) => s.close()))
        await listener.revoked(partitions)
      })()
      return left
    },
  }
}

async function watchFailure(sub: TailSubscription, partition: number, listener: GroupListener): Promise<void> {
  const err = await sub.failure
  if (err !== undefined) listener.failed?.(partition, err)
}
