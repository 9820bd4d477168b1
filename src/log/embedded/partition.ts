/**
 * The in-memory view of one partition: where its offsets stand and who tails it.
 *
 *   begin ≤ end ≤ next
 *   begin  first retained offset (moves forward with retention)
 *   end    offsets below it are durable and readable
 *   next   offset the next staged record takes (> end while a batch is being written)
 */
import type { LogRecord } from '../types.js'
import {
  logStartKey,
  offsetOfRecordKey,
  readU64,
  recordKey,
  recordPrefix,
} from './keys.js'
import { decodeSegment, segmentCount } from './segment-v2.js'
import type { HealingDb } from './healing-db.js'
import { scanSegments } from './segment-scan.js'
import type { PartitionFeed, TailSubscription } from './subscription.js'

const LAST_OFFSET = Number.MAX_SAFE_INTEGER

export class PartitionState implements PartitionFeed {
  readonly topic: string
  readonly partition: number
  readonly prefix: Buffer
  readonly tails = new Set<TailSubscription>()
  readonly #db: HealingDb
  begin: number
  end: number
  next: number

  constructor(db: HealingDb, topic: string, partition: number, begin: number, end: number) {
    this.#db = db
    this.topic = topic
    this.partition = partition
    this.prefix = recordPrefix(topic, partition)
    this.begin = begin
    this.end = end
    this.next = end
  }

  /** Recovers begin and end from what is on disk. */
  static async load(db: HealingDb, topic: string, partition: number): Promise<PartitionState> {
    const prefix = recordPrefix(topic, partition)
    const range = { gte: recordKey(prefix, 0), lt: recordKey(prefix, LAST_OFFSET), limit: 1 }
    const [first, last, start] = await db.read(async (level) => [
      (await level.keys(range).all())[0],
      (await level.iterator({ ...range, reverse: true }).all())[0],
      await level.get(logStartKey(topic, partition)),
    ] as const)
    const logStart = start === undefined ? 0 : readU64(start, 0)
    // an empty partition continues after its log start, so emptied offsets are never reused
    const end = last === undefined ? logStart : offsetOfRecordKey(last[0]) + segmentCount(last[1])
    // retention keeps a segment until all of its records expire, so the log start may lie inside it
    const begin = first === undefined ? end : Math.max(offsetOfRecordKey(first), logStart)
    return new PartitionState(db, topic, partition, begin, end)
  }

  async read(from: number, max: number, until: number): Promise<LogRecord[]> {
    // starting at begin skips the records (and tombstones) that retention removed
    const start = Math.max(from, this.begin)
    if (max <= 0 || start >= until) return []
    // `until` is at most `end`: records of a batch that failed are never read, even if they
    // reappeared on disk (healing-db.ts)
    const segments = await this.#db.read((db) => scanSegments(db, this.prefix, start, until, max))
    const records: LogRecord[] = []
    for (const segment of segments) {
      const skip = Math.max(0, start - segment.start)
      let offset = segment.start + skip
      const take = Math.min(max - records.length, until - offset)
      for (const { key, value, timestamp } of decodeSegment(segment.value, skip, take)) {
        records.push({ key, value, timestamp, partition: this.partition, offset: offset++ })
      }
      if (records.length >= max) break
    }
    return records
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
