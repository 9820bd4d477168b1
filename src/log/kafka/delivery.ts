/**
 * The records of one partition a group member owns, fetched on a connection of its own and
 * decoded by record-batch-v2.ts — never by kafkajs' group consumer, which decodes a whole Fetch
 * answer at once: one batch it cannot read (a codec it lacks, a corrupt batch) rejects the answer
 * for every partition of the broker, and the consumer crashes for good. Here a batch that cannot
 * be read concerns its own partition only.
 *
 * A failure to fetch (a broker away, a leader moving) is retried with a growing pause. A batch
 * that cannot be read is retried a few times (a bad read passes; a bad batch does not), then the
 * owner decides (`unreadable`): set it aside and go on past it, or stay stopped at it; a stopped
 * partition tries again now and then, so that it goes on by itself if the batch becomes readable.
 * The handler's failure ends delivery and is the owner's to handle (`failed`).
 */
import type { Kafka } from 'kafkajs'
import { UnreadableBatch } from '../errors.js'
import type { LogRecord } from '../types.js'
import { isOutOfRange, PartitionReader } from './partition-reader.js'

export interface DeliveryOptions {
  kafka: Kafka
  topic: string
  partition: number
  from: number
  /** the next fetch waits for its promise (backpressure) */
  deliver(records: LogRecord[]): Promise<void>
  /** true: the batch is set aside, go on past it; false: stay stopped at it */
  unreadable(err: UnreadableBatch): Promise<boolean>
  /** delivery ended because the handler threw */
  failed(err: unknown): void
  onError?(err: unknown, where: string): void
}

const POLL_MS = 250
/** reads of an unreadable batch before the owner decides */
export const UNREADABLE_ATTEMPTS = 3
const MIN_BACKOFF_MS = 50
const MAX_BACKOFF_MS = 2000
/** how often a partition stopped at an unreadable batch reads it again */
const STOPPED_RETRY_MS = 30_000

export class PartitionDelivery {
  readonly #o: DeliveryOptions
  readonly #reader: PartitionReader
  readonly #done: Promise<void>
  #halted = false
  #wake: (() => void) | undefined
  /** the next offset to fetch */
  position: number

  constructor(o: DeliveryOptions) {
    this.#o = o
    this.position = o.from
    this.#reader = new PartitionReader(o.kafka)
    this.#done = this.#run().finally(() => this.#reader.close().catch(() => undefined))
  }

  async #run(): Promise<void> {
    const { topic, partition } = this.#o
    let backoff = MIN_BACKOFF_MS
    let unreadable = 0
    while (!this.#halted) {
      let fetched
      try {
        fetched = await this.#reader.records(topic, partition, this.position, POLL_MS)
        backoff = MIN_BACKOFF_MS
      } catch (err) {
        if (this.#halted) return
        if (err instanceof UnreadableBatch) {
          if (++unreadable < UNREADABLE_ATTEMPTS) {
            this.#o.onError?.(err, `reading ${topic}/${partition} at offset ${this.position} (attempt ${unreadable} of ${UNREADABLE_ATTEMPTS})`)
          } else if (await this.#o.unreadable(err)) {
            this.position = Math.max(this.position, err.lastOffset + 1)
            unreadable = 0
            continue
          } else {
            await this.#pause(STOPPED_RETRY_MS)
            continue
          }
        } else if (isOutOfRange(err)) {
          // below the retained head: start there; past the end: wait for the log to get there
          const begin = await this.#reader.offset(topic, partition, true).catch(() => this.position)
          if (this.position < begin) {
            this.position = begin
            continue
          }
        } else {
          this.#o.onError?.(err, `fetching ${topic}/${partition} at offset ${this.position}`)
        }
        await this.#pause(backoff)
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
        continue
      }
      unreadable = 0
      if (this.#halted) return
      if (fetched.records.length > 0) {
        try {
          await this.#o.deliver(fetched.records)
        } catch (err) {
          this.#halted = true
          this.#o.failed(err)
          return
        }
      }
      this.position = Math.max(this.position, fetched.next)
    }
  }

  #pause(ms: number): Promise<void> {
    if (this.#halted) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#wake = () => (clearTimeout(timer), resolve())
    })
  }

  /** Delivers nothing more from now on (records fetched meanwhile are dropped, not delivered). */
  halt(): void {
    this.#halted = true
    this.#wake?.()
  }

  /** Halts and resolves once no handler call is running. */
  async close(): Promise<void> {
    this.halt()
    await this.#done
  }
}
