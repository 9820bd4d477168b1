/**
 * One `append` call as a group-commit job: its records take offsets when the batch is formed,
 * become visible to readers and tails when the batch is durable, and give their offsets back
 * when it fails. The records of every job of a batch that land in one partition form one
 * segment (segment-v2.ts), split only when it would grow past MAX_SEGMENT_BYTES, and the
 * segments of one topic form one frame of its data files (topic-files.ts).
 */
import type { LogRecord, ProducerRecord } from '../types.js'
import type { CommitJob } from './commit-queue.js'
import type { FramePart } from './frame-v1.js'
import type { LogPartition } from './partition.js'
import { planSegmentV2, segmentOverhead } from './segment-v2.js'
import type { TopicFiles } from './topic-files.js'

/**
 * A reader that starts inside a segment reads the whole segment, so segments stay small enough
 * that a tail's chunk (1000 records) costs at most about one segment more than it holds.
 */
export const MAX_SEGMENT_BYTES = 256 * 1024

/** What one group commit writes: per topic, the records each partition takes. */
export type EventBatch = Map<TopicFiles, Map<LogPartition, SegmentGathering>>

/** The records one batch appends to one partition, as the segments that will hold them. */
class SegmentGathering {
  readonly #partition: number
  #first: number
  #records: ProducerRecord[] = []
  /** what the segment being gathered would take, counting one byte per key character */
  #bytes = segmentOverhead(0)
  readonly #parts: FramePart[] = []

  constructor(partition: number, first: number) {
    this.#partition = partition
    this.#first = first
  }

  /** `record` takes the offset after the previous one added. */
  add(record: ProducerRecord): void {
    const bytes = segmentOverhead(1) - segmentOverhead(0) + record.key.length + record.value.length
    if (this.#records.length > 0 && this.#bytes + bytes > MAX_SEGMENT_BYTES) this.#cut()
    this.#records.push(record)
    this.#bytes += bytes
  }

  seal(): FramePart[] {
    this.#cut()
    return this.#parts
  }

  #cut(): void {
    if (this.#records.length === 0) return
    this.#parts.push({ partition: this.#partition, first: this.#first, segment: planSegmentV2(this.#records) })
    this.#first += this.#records.length
    this.#records = []
    this.#bytes = segmentOverhead(0)
  }
}

/**
 * Writes a batch: one frame per topic it touches (nearly always one). When a later topic's frame
 * fails, the earlier ones are taken back, so the batch is all or nothing.
 */
export async function writeEventBatch(batch: EventBatch): Promise<void> {
  const written: TopicFiles[] = []
  try {
    for (const [files, segments] of batch) {
      const parts: FramePart[] = []
      for (const segment of segments.values()) parts.push(...segment.seal())
      await files.append(parts)
      written.push(files)
    }
  } catch (err) {
    for (const files of written.reverse()) await files.undoLast()
    throw err
  }
}

export class AppendJob implements CommitJob<EventBatch> {
  readonly size: number
  readonly #records: readonly ProducerRecord[]
  readonly #targets: readonly LogPartition[]
  /** each partition touched, with its `next` before this job took offsets */
  #taken: Array<[LogPartition, number]> = []
  #staged: LogRecord[] = []

  /** `targets[i]` is the partition of `records[i]`. */
  constructor(records: readonly ProducerRecord[], targets: readonly LogPartition[]) {
    this.size = records.length
    this.#records = records
    this.#targets = targets
  }

  stage(batch: EventBatch): void {
    // a job touches a few partitions: a list finds them faster than a map, and costs less to make
    const segments: SegmentGathering[] = []
    for (let i = 0; i < this.#records.length; i++) {
      const target = this.#targets[i]
      let k = 0
      while (k < this.#taken.length && this.#taken[k][0] !== target) k++
      let segment: SegmentGathering | undefined = segments[k]
      if (segment === undefined) {
        this.#taken.push([target, target.next])
        let frame = batch.get(target.files)
        if (frame === undefined) batch.set(target.files, (frame = new Map<LogPartition, SegmentGathering>()))
        segment = frame.get(target)
        if (segment === undefined) frame.set(target, (segment = new SegmentGathering(target.partition, target.next)))
        segments.push(segment)
      }
      const offset = target.next++
      const record = this.#records[i]
      segment.add(record)
      const { key, value, timestamp, decoded } = record
      this.#staged.push({ key, value, timestamp, partition: target.partition, offset, decoded })
    }
  }

  commit(): void {
    if (this.#taken.length === 1) {
      this.#taken[0][0].publish(this.#staged)
      return
    }
    for (const [target] of this.#taken) {
      target.publish(this.#staged.filter((record) => record.partition === target.partition))
    }
  }

  abort(): void {
    for (let i = this.#taken.length - 1; i >= 0; i--) {
      const [target, next] = this.#taken[i]
      target.next = next
    }
    this.#taken = []
    this.#staged = []
  }
}
