/**
 * One `append` call as a group-commit job: its records take offsets when the batch is formed,
 * become visible to readers and tails when the batch is durable, and give their offsets back
 * when it fails.
 */
import type { LogRecord, ProducerRecord } from '../types.js'
import type { BatchOp, CommitJob } from './commit-queue.js'
import { recordKey } from './keys.js'
import type { PartitionState } from './partition.js'

export class AppendJob implements CommitJob {
  readonly size: number
  readonly #records: readonly ProducerRecord[]
  readonly #targets: readonly PartitionState[]
  readonly #encoded: readonly Buffer[]
  /** each partition touched, with its `next` before this job took offsets */
  #taken: Array<[PartitionState, number]> = []
  #staged: LogRecord[] = []

  /** `targets[i]` is the partition of `records[i]`, `encoded[i]` its stored value. */
  constructor(records: readonly ProducerRecord[], targets: readonly PartitionState[], encoded: readonly Buffer[]) {
    this.size = records.length
    this.#records = records
    this.#targets = targets
    this.#encoded = encoded
  }

  stage(ops: BatchOp[]): void {
    for (let i = 0; i < this.#records.length; i++) {
      const target = this.#targets[i]
      if (!this.#taken.some(([p]) => p === target)) this.#taken.push([target, target.next])
      const offset = target.next++
      ops.push({ type: 'put', key: recordKey(target.prefix, offset), value: this.#encoded[i] })
      const { key, value, timestamp, decoded } = this.#records[i]
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
