/**
 * The one writer of one partition: a transactional producer whose transactional id names the
 * partition (Kafka Streams' producer per task, exactly-once "alpha"), so that the broker fences
 * whoever wrote the partition before.
 *
 * Claiming sends InitProducerId for the id. The transaction coordinator bumps the id's epoch, so
 * every earlier producer of the id is fenced — its next AddPartitionsToTxn, Produce or EndTxn is
 * refused with INVALID_PRODUCER_EPOCH — and it first completes the transaction such a producer
 * left open: one whose commit it had received is committed, any other aborted (kafkajs retries
 * CONCURRENT_TRANSACTIONS until that is done). When the claim resolves nothing but this writer can
 * change the partition, and the partition's last stable offset is past everything anyone committed
 * to it: a read_committed reader that starts now sees the whole of it.
 *
 * An append is one transaction, answered once its records are readable. Its answer is the
 * partition's end right after it — the offset past its commit marker, which one past its last
 * record takes — computed, not read back: an end read back could already include a later writer's
 * records, and a store that remembered it would then pass for holding them.
 *
 * A refusal as fenced, or a commit whose outcome is unknown, leaves the writer unusable for good;
 * it never claims again by itself (that would fence the partition's rightful owner when this one
 * is the zombie). Claiming again is the owner's decision.
 */
import type { Kafka, Message, Producer, RecordMetadata, RetryOptions } from 'kafkajs'
import { LogError } from '../errors.js'
import type { PartitionWriter, ProducerRecord } from '../types.js'
import { settleBy } from './deadline.js'
import type { VisibilityWatcher } from './visibility.js'

export interface WriterOptions {
  topic: string
  partition: number
  transactionalId: string
  transactionTimeoutMs: number
  /** a claim or an append not done by then fails (an append's commit then has an unknown outcome) */
  timeoutMs: number
  retry: RetryOptions
  visibility: VisibilityWatcher
  /** kafkajs' codec id for the changelog's batches (codecs.ts) */
  compression: number
}

/**
 * per send within one transaction: a snapshot of a large partition is sent in several. kafkajs
 * groups a send's messages by partition copying the group for every message, so a send costs the
 * square of its records in one turn of the event loop (10 000 records: 110 ms idle, 200–290 ms
 * under load — the stalls of a Kafka node's snapshots); 1 000 cost 6 ms, 500 about a quarter of
 * that, and the sends between them let ingest run
 */
const SEND_MAX_RECORDS = 500
const SEND_MAX_BYTES = 4 * 1024 * 1024
const RECORD_OVERHEAD = 70

/** kafkajs' names (and the newer broker's code 90, which kafkajs 2.2.4 does not know) of a refusal as fenced */
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_PRODUCER_ID_MAPPING'])

export function isFenced(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== 'object' || err === null) return false
  if (err instanceof LogError) return err.code === 'LOG_FENCED' || isFenced(err.cause, depth + 1)
  const e = err as { type?: unknown; message?: unknown; cause?: unknown; originalError?: unknown }
  if (typeof e.type === 'string' && FENCED.has(e.type)) return true
  if (typeof e.message === 'string' && /Unknown error code 90\b|producer.*fenced|attempted an operation with an old epoch/i.test(e.message)) return true
  return isFenced(e.cause, depth + 1) || isFenced(e.originalError, depth + 1)
}

export class KafkaPartitionWriter implements PartitionWriter {
  readonly #producer: Producer
  readonly #o: WriterOptions
  #usable = true
  /** appends run one after the other: a producer has one transaction at a time */
  #queue: Promise<unknown> = Promise.resolve()

  private constructor(producer: Producer, o: WriterOptions) {
    this.#producer = producer
    this.#o = o
  }

  /** Fences every earlier writer of the id and waits for its open transaction to be completed. */
  static async claim(kafka: Kafka, o: WriterOptions): Promise<KafkaPartitionWriter> {
    const producer = kafka.producer({
      transactionalId: o.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: o.transactionTimeoutMs,
      retry: o.retry,
      allowAutoTopicCreation: false,
    })
    const init = (async () => {
      await producer.connect()
      // InitProducerId for the transactional id is sent by the first transaction()
      const txn = await producer.transaction()
      await txn.abort() // nothing was sent in it: kafkajs ends it without a request
    })()
    const done = await settleBy(init, Date.now() + o.timeoutMs)
    if (!done.ok) {
      void producer.disconnect().catch(() => undefined)
      const why = done.timedOut ? 'timed out' : messageOf(done.error)
      throw new LogError('LOG_UNAVAILABLE', `claiming ${o.topic}/${o.partition} as ${o.transactionalId}: ${why}`, { cause: done.error })
    }
    return new KafkaPartitionWriter(producer, o)
  }

  get usable(): boolean {
    return this.#usable
  }

  append(records: ProducerRecord[]): Promise<number> {
    const run = this.#queue.then(() => this.#append(records))
    this.#queue = run.catch(() => undefined)
    return run
  }

  async #append(records: ProducerRecord[]): Promise<number> {
    if (!this.#usable) throw new LogError('LOG_FENCED', `${this.#o.topic}/${this.#o.partition}: this writer can no longer write`)
    if (records.length === 0) throw new LogError('LOG_BAD_ARGUMENT', 'an append needs records')
    const { topic, partition, timeoutMs } = this.#o
    const deadline = Date.now() + timeoutMs
    let commitSent = false
    let expired = false
    let last: { messages: Message[]; sent: RecordMetadata[] } | undefined
    const work = (async () => {
      const txn = await this.#producer.transaction()
      try {
        for (const messages of sends(records, partition)) {
          const sent = await txn.sendBatch({ topicMessages: [{ topic, messages }], acks: -1, compression: this.#o.compression, timeout: Math.max(1, deadline - Date.now()) })
          last = { messages, sent }
        }
      } catch (err) {
        // nothing is committed; the transaction is aborted here, or by the coordinator when this
        // producer is fenced or its transaction times out
        await txn.abort().catch(() => (this.#usable = false))
        throw err
      }
      // past the deadline the append was answered: a transaction not committed by then never is
      if (expired) throw new LogError('LOG_UNAVAILABLE', 'no answer within the produce timeout')
      commitSent = true
      await txn.commit()
    })()
    const done = await settleBy(work, deadline)
    if (!done.ok) {
      expired = true
      const fenced = !done.timedOut && isFenced(done.error)
      if (fenced || commitSent || done.timedOut) this.#usable = false
      const why = done.timedOut ? 'no answer within the produce timeout' : messageOf(done.error)
      if (fenced) throw new LogError('LOG_FENCED', `${topic}/${partition} was claimed by another writer: ${why}`, { cause: done.error })
      if (commitSent) throw new LogError('LOG_OUTCOME_UNKNOWN', `${topic}/${partition}: ${why}`, { cause: done.error })
      throw new LogError(done.timedOut ? 'LOG_UNAVAILABLE' : 'LOG_WRITE_FAILED', `${topic}/${partition}: ${why}`, { cause: done.error })
    }
    const { messages, sent } = last!
    const meta = sent.find((m) => m.topicName === topic && m.partition === partition)
    if (meta?.baseOffset === undefined) {
      this.#usable = false
      throw new LogError('LOG_OUTCOME_UNKNOWN', `${topic}/${partition}: the broker named no offset for the records`)
    }
    // handed over only once readable: a reader that starts after this answer sees them
    await this.#o.visibility.wait([{ topic, messages }], sent, Date.now() + timeoutMs)
    const lastOffset = Number(meta.baseOffset) + messages.length - 1
    return lastOffset + 2
  }

  async close(): Promise<void> {
    this.#usable = false
    await this.#queue
    await this.#producer.disconnect().catch(() => undefined)
  }
}

/** The records as kafkajs messages, in sends of bounded size (SEND_MAX_RECORDS, SEND_MAX_BYTES). */
export function* sends(records: ProducerRecord[], partition: number): Generator<Message[]> {
  let batch: Message[] = []
  let bytes = 0
  for (const r of records) {
    const size = r.key.length + r.value.length + RECORD_OVERHEAD
    if (batch.length > 0 && (batch.length >= SEND_MAX_RECORDS || bytes + size > SEND_MAX_BYTES)) {
      yield batch
      batch = []
      bytes = 0
    }
    batch.push({ key: r.key, value: r.value, timestamp: String(r.timestamp), partition })
    bytes += size
  }
  if (batch.length > 0) yield batch
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
