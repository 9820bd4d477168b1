/**
 * One subscriber of one partition: catches up by reading storage in chunks, then takes new
 * records straight from memory as each batch becomes durable.
 *
 * Records pushed from memory are kept only while they continue exactly where delivery stands
 * and the buffer has room; anything else is dropped and read back from storage later. So a slow
 * handler gets everything that piled up in its next call, memory stays bounded, and no record is
 * skipped or delivered twice.
 */
import type { LogRecord, RecordHandler, Subscription } from '../types.js'

export interface PartitionFeed {
  /** offsets below this are durable */
  readonly end: number
  /** durable records from `from` (or the first retained one after it) to below `until` */
  read(from: number, max: number, until: number): Promise<LogRecord[]>
  detach(tail: TailSubscription): void
}

export interface TailOptions {
  /** records per storage read while catching up */
  chunk: number
  /** records held in memory for a busy handler before falling back to storage */
  maxBuffered: number
}

export class TailSubscription implements Subscription {
  readonly #feed: PartitionFeed
  readonly #handler: RecordHandler
  readonly #options: TailOptions
  /** next offset to hand to the handler */
  #position: number
  #buffer: LogRecord[] = []
  #reading = false
  #closed = false
  #failure: unknown = undefined
  #wake: (() => void) | null = null
  readonly #done: Promise<void>
  /** resolves with the error that stopped delivery, or undefined once closed without one */
  readonly failure: Promise<unknown>

  constructor(feed: PartitionFeed, from: number, handler: RecordHandler, options: TailOptions) {
    this.#feed = feed
    this.#handler = handler
    this.#options = options
    this.#position = from
    this.#done = this.#run()
    this.failure = this.#done.then(() => this.#failure)
  }

  /** Called with the records of each durable batch of this partition, in offset order. */
  push(records: LogRecord[]): void {
    if (this.#closed) return
    const last = this.#buffer.at(-1)
    const expected = last === undefined ? this.#position : last.offset + 1
    const fits = this.#buffer.length + records.length <= this.#options.maxBuffered
    // during a storage read the position is stale: what arrives now is read back afterwards
    if (!this.#reading && fits && records[0]?.offset === expected) {
      for (const record of records) this.#buffer.push(record)
    }
    this.#signal()
  }

  async close(): Promise<void> {
    this.#stop()
    await this.#done
    // the read's own failure, passed on to every waiter as it came
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (this.#failure !== undefined) throw this.#failure
  }

  #stop(): void {
    if (this.#closed) return
    this.#closed = true
    this.#buffer = []
    this.#feed.detach(this)
    this.#signal()
  }

  #signal(): void {
    const wake = this.#wake
    this.#wake = null
    wake?.()
  }

  async #next(): Promise<LogRecord[] | null> {
    if (this.#buffer.length > 0) {
      const records = this.#buffer
      this.#buffer = []
      return records
    }
    const until = this.#feed.end
    if (this.#position >= until) {
      await new Promise<void>((resolve) => (this.#wake = resolve))
      return null
    }
    this.#reading = true
    try {
      const records = await this.#feed.read(this.#position, this.#options.chunk, until)
      // nothing left below `until` (retention removed it): continue from there
      if (records.length === 0) this.#position = until
      return records
    } finally {
      this.#reading = false
    }
  }

  async #run(): Promise<void> {
    try {
      while (!this.#closed) {
        const records = await this.#next()
        if (records === null || records.length === 0 || this.#closed) continue
        this.#position = records[records.length - 1].offset + 1
        await this.#handler(records)
      }
    } catch (err) {
      // the handler (or a read) failed: delivery stops and close() reports why
      this.#failure = err
      this.#stop()
    }
  }
}
