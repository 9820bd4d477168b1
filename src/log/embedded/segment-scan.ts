/**
 * Finding stored segments by offset. A segment's key holds its first offset only, so the segment
 * holding an offset is the last one keyed at or below it: a read that starts on a segment's first
 * offset (the usual case: tails resume where the previous batch ended) costs one forward range
 * scan, one that starts inside a segment one reverse seek more.
 */
import { offsetOfRecordKey, recordKey } from './keys.js'
import { segmentCount } from './segment-v2.js'
import type { LogDb } from './storage.js'

/**
 * How many bytes one step of a range scan may fetch: a tail's chunk of 1000 records of ~300 bytes
 * in one thread-pool round trip (classic-level stops a step at 16 KiB by default).
 */
const READ_AHEAD_BYTES = 1024 * 1024

/** A stored segment's bytes and the offset of its first record. */
export interface SegmentBytes {
  start: number
  value: Buffer
  /** its LevelDB key, when it is stored in LevelDB rather than in a data file */
  key?: Buffer
}

export interface StoredSegment extends SegmentBytes {
  key: Buffer
}

/**
 * The segments holding the records from `from` on, up to `until` (exclusive), in order: as many
 * as hold `records` records from `from` on, or all of them up to `until`. The first may begin
 * before `from`.
 */
export async function scanSegments(db: LogDb, prefix: Buffer, from: number, until: number, records: number): Promise<StoredSegment[]> {
  const found: StoredSegment[] = []
  let held = 0
  const add = (key: Buffer, value: Buffer): void => {
    const start = offsetOfRecordKey(key)
    const end = Math.min(until, start + segmentCount(value))
    if (end <= from) return
    found.push({ start, key, value })
    held += end - Math.max(start, from)
  }
  const it = db.iterator({ gte: recordKey(prefix, from), lt: recordKey(prefix, until), highWaterMarkBytes: READ_AHEAD_BYTES })
  try {
    // every stored value holds at least one record, so `records` values are always enough
    let entries = await it.nextv(records)
    if (entries.length === 0 || offsetOfRecordKey(entries[0][0]) > from) {
      const before = await db.iterator({ gte: recordKey(prefix, 0), lt: recordKey(prefix, from), reverse: true, limit: 1 }).all()
      for (const [key, value] of before) add(key, value)
    }
    while (entries.length > 0) {
      for (const [key, value] of entries) {
        if (held >= records) return found
        add(key, value)
      }
      if (held >= records) return found
      entries = await it.nextv(records - held)
    }
    return found
  } finally {
    await it.close()
  }
}
