/**
 * Time-based retention at record granularity: from the head of a partition, delete records whose
 * timestamp is older than the cutoff, stopping at the first newer one. Kafka deletes whole
 * segments whose newest record is too old; stopping at the first newer record is the same rule
 * for a log without segments, and it keeps offsets dense from `begin` to `end`.
 */
import { encodeU64, logStartKey, offsetOfRecordKey, recordKey } from './keys.js'
import type { PartitionState } from './partition.js'
import { recordTimestamp } from './record-v1.js'
import type { HealingDb } from './healing-db.js'

const CHUNK = 1000

/** Deletes expired records from the head of `part`; returns how many. */
export async function trimPartition(db: HealingDb, part: PartitionState, cutoff: number): Promise<number> {
  let deleted = 0
  for (;;) {
    const from = part.begin
    const until = part.end
    if (from >= until) return deleted
    const entries = await db.read((level) =>
      level.iterator({ gte: recordKey(part.prefix, from), lt: recordKey(part.prefix, until), limit: CHUNK }).all())
    let expired = 0
    while (expired < entries.length && recordTimestamp(entries[expired][1]) < cutoff) expired++
    if (expired === 0) return deleted
    const begin = expired < entries.length
      ? offsetOfRecordKey(entries[expired][0])
      : offsetOfRecordKey(entries[expired - 1][0]) + 1
    const ops = entries.slice(0, expired).map(([key]) => ({ type: 'del' as const, key }))
    // the new log start goes in the same atomic batch, so a restart never reuses an offset
    const logStart = { type: 'put' as const, key: logStartKey(part.topic, part.partition), value: encodeU64(begin) }
    await db.write([...ops, logStart], false)
    part.begin = begin
    deleted += expired
    if (expired < entries.length) return deleted
  }
}
