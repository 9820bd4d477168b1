/**
 * A manual subscription to one partition: long-polling fetches from the next offset, one handler
 * call at a time, the next fetch only after the handler's promise (backpressure). Transient broker
 * errors are retried with a growing pause; a handler error stops delivery and close() reports it.
 */
import type { Kafka } from 'kafkajs'
import type { LogRecord, Subscription } from '../types.js'
import type { RawMessage } from './kafkajs-internals.js'
import { isOutOfRange, PartitionReader, toLogRecord } from './partition-reader.js'

export interface TailOptions<T> {
  topic: string
  partition: number
  from: number
  /** called with the next records, in offset order; the next fetch waits for its promise */
  handler: (items: T[]) => Promise<void> | void
  /** what the handler gets for each committed message */
  map: (message: RawMessage, partition: number) => T
  /** a failed fetch, retried; `position` is the offset it tried to read */
  onTransientError?: (err: unknown, position: number) => void
  /** where the next fetch starts, after each fetch: it steps over commit markers no handler sees */
  onPosition?: (next: number) => void
}

/** the event log's tail: LogRecords */
export const eventTail = (o: Omit<TailOptions<LogRecord>, 'map'>): TailOptions<LogRecord> => ({ ...o, map: toLogRecord })

const POLL_MS = 250
const MAX_BACKOFF_MS = 2000

export class KafkaTail<T> implements Subscription {
  readonly #reader: PartitionReader
  readonly #o: TailOptions<T>
  readonly #done: Promise<void>
  #closed = false
  #failure: unknown = undefined
  #wake: (() => void) | undefined
  /** resolves with the error that stopped delivery, or undefined once closed without one */
  readonly failure: Promise<unknown>

  constructor(kafka: Kafka, o: TailOptions<T>) {
    this.#o = o
    this.#reader = new PartitionReader(kafka)
    this.#done = this.#run(o.from)
    this.failure = this.#done.then(() => this.#failure)
  }

  async #run(from: number): Promise<void> {
    const { topic, partition, handler, map } = this.#o
    let position = from
    let backoff = 50
    try {
      while (!this.#closed) {
        let batch
        try {
          batch = await this.#reader.fetch(topic, partition, position, POLL_MS)
          backoff = 50
        } catch (err) {
          if (this.#closed) break
          if (isOutOfRange(err)) {
            // below the retained head: start there; past the end: wait for the log to get there
            const begin = await this.#reader.offset(topic, partition, true).catch(() => position)
            if (position < begin) {
              position = begin
              continue
            }
          } else {
            this.#o.onTransientError?.(err, position)
          }
          await this.#pause(backoff)
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
          continue
        }
        if (this.#closed) break
        position = batch.next
        if (batch.messages.length > 0) await handler(batch.messages.map((m) => map(m, partition)))
        this.#o.onPosition?.(position)
      }
    } catch (err) {
      this.#failure = err
      this.#closed = true
    } finally {
      await this.#reader.close().catch(() => undefined)
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#wake = () => (clearTimeout(timer), resolve())
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#wake?.()
    await this.#done
    // the read's own failure, passed on to every waiter as it came
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (this.#failure !== undefined) throw this.#failure
  }
}
