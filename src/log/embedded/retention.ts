/**
 * Time-based retention at record granularity: from the head of a partition, records whose
 * timestamp is older than the cutoff expire, up to the first newer one; offsets stay dense from
 * `begin` to `end`. Expired records stop being readable at once (the partition's begin moves past
 * them, and the log start records it); their storage goes a piece at a time: a data file once
 * every partition's records in it expired (Kafka's rule for its segment files), a segment stored
 * in LevelDB before data files once all of its records expired.
 */
import { encodeU64, logStartKey } from './keys.js'
import type { LogPartition } from './partition.js'
import { segmentTimestamps } from './segment-v2.js'
import type { HealingDb } from './healing-db.js'

const CHUNK = 1000

/** Expires the old records at the head of `part`; returns how many. */
export async function trimPartition(db: HealingDb, part: LogPartition, cutoff: number): Promise<number> {
  let expired = 0
  for (;;) {
    const from = part.begin
    const until = part.end
    if (from >= until) return expired
    const segments = await part.segments(from, until, CHUNK, true)
    let begin = from
    let newer = false
    const deletes: Array<{ type: 'del'; key: Buffer }> = []
    for (const segment of segments) {
      const stamps = segmentTimestamps(segment.value)
      const last = Math.min(stamps.length, until - segment.start)
      let i = Math.max(0, from - segment.start)
      while (i < last && stamps[i] < cutoff) i++
      begin = segment.start + i
      if (i < stamps.length) {
        newer = true
        break
      }
      if (segment.key !== undefined) deletes.push({ type: 'del', key: segment.key })
    }
    if (begin === from) return expired
    // the new log start goes in the same atomic batch, so a restart never reuses an offset
    const logStart = { type: 'put' as const, key: logStartKey(part.topic, part.partition), value: encodeU64(begin) }
    await db.write([...deletes, logStart], false)
    part.begin = begin
    expired += begin - from
    if (newer) return expired
  }
}
