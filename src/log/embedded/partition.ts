/**
 * The in-memory view of one partition: where its offsets stand, where its records lie, and who
 * tails it.
 *
 *   begin ≤ end ≤ next
 *   begin      first retained offset (moves forward with retention)
 *   end        offsets below it are durable and readable
 *   next       offset the next staged record takes (> end while a batch is being written)
 *   legacyEnd  offsets below it are in LevelDB, stored before data files (record-v1.ts); the
 *              records from it on are in the topic's data files (topic-files.ts)
 */
import type { LogRecord } from '../types.js'
import type { HealingDb } from './healing-db.js'
import { logStartKey, offsetOfRecordKey, readU64, recordKey, recordPrefix } from './keys.js'
import { readSegment, segmentCount } from './segment-v2.js'
import { type SegmentBytes, scanSegments } from './segment-scan.js'
import type { PartitionFeed, TailSubscription } from './subscription.js'
import type { TopicFiles } from './topic-files.js'

const LAST_OFFSET = Number.MAX_SAFE_INTEGER

export interface PartitionBounds {
  begin: number
  end: number
  legacyEnd: number
}

export class LogPartition implements PartitionFeed {
  readonly topic: string
  readonly partition: number
  readonly prefix: Buffer
  readonly files: TopicFiles
  readonly tails = new Set<TailSubscription>()
  readonly #db: HealingDb
  begin: number
  end: number
  next: number
  readonly legacyEnd: number

  constructor(db: HealingDb, files: TopicFiles, topic: string, partition: number, bounds: PartitionBounds) {
    this.#db = db
    this.files = files
    this.topic = topic
    this.partition = partition
    this.prefix = recordPrefix(topic, partition)
    this.begin = bounds.begin
    this.end = bounds.end
    this.next = bounds.end
    this.legacyEnd = bounds.legacyEnd
  }

  /** Recovers begin and end from what is on disk: records in LevelDB, in data files, and the log start. */
  static async load(db: HealingDb, files: TopicFiles, topic: string, partition: number): Promise<LogPartition> {
    const prefix = recordPrefix(topic, partition)
    const range = { gte: recordKey(prefix, 0), lt: recordKey(prefix, LAST_OFFSET), limit: 1 }
    const [first, last, start] = await db.read(async (level) => [
      (await level.keys(range).all())[0],
      (await level.iterator({ ...range, reverse: true }).all())[0],
      await level.get(logStartKey(topic, partition)),
    ] as const)
    const logStart = start === undefined ? 0 : readU64(start, 0)
    const legacyEnd = last === undefined ? 0 : offsetOfRecordKey(last[0]) + segmentCount(last[1])
    const inFiles = files.range(partition)
    // an emptied partition continues after its log start, so emptied offsets are never reused
    const end = Math.max(logStart, legacyEnd, inFiles?.end ?? 0)
    const stored = first !== undefined ? offsetOfRecordKey(first) : inFiles?.first ?? end
    // retention keeps a segment until all of its records expire, so the log start may lie inside it
    const begin = Math.min(end, Math.max(stored, logStart))
    return new LogPartition(db, files, topic, partition, { begin, end, legacyEnd })
  }

  async read(from: number, max: number, until: number): Promise<LogRecord[]> {
    // starting at begin skips the records (and tombstones) that retention removed
    const start = Math.max(from, this.begin)
    if (max <= 0 || start >= until) return []
    // `until` is at most `end`: records of a batch that failed are never read
    const records: LogRecord[] = []
    for (const segment of await this.segments(start, until, max)) {
      const skip = Math.max(0, start - segment.start)
      const offset = segment.start + skip
      readSegment(segment.value, skip, Math.min(max - records.length, until - offset), this.partition, offset, records)
      if (records.length >= max) break
    }
    return records
  }

  /**
   * The stored segments holding the records from `from` on, below `until`: enough to hold `max`
   * records, the first maybe beginning before `from`. With `tableOnly` a data file segment's
   * value holds only its header and table (timestamps).
   */
  async segments(from: number, until: number, max: number, tableOnly = false): Promise<SegmentBytes[]> {
    const found: SegmentBytes[] = []
    let held = 0
    if (from < this.legacyEnd) {
      const legacyUntil = Math.min(until, this.legacyEnd)
      for (const segment of await this.#db.read((db) => scanSegments(db, this.prefix, from, legacyUntil, max))) {
        found.push(segment)
        held += Math.min(legacyUntil, segment.start + segmentCount(segment.value)) - Math.max(from, segment.start)
      }
    }
    const rest = Math.max(from, this.legacyEnd)
    if (held < max && rest < until) found.push(...(await this.files.segments(this.partition, rest, until, max - held, tableOnly)))
    return found
  }

  /** A batch holding `records` (consecutive, from `end` on) is durable. */
  publish(records: LogRecord[]): void {
    this.end = records[records.length - 1].offset + 1
    for (const tail of this.tails) tail.push(records)
  }

  detach(tail: TailSubscription): void {
    this.tails.delete(tail)
  }
}
