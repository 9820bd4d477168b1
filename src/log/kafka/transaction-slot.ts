/**
 * One transactional producer: one group commit at a time, each a Kafka transaction, with an answer
 * by a deadline that never claims "not stored" for records that may still become visible.
 *
 * Why the answer is safe. Records of a transaction become visible to read_committed consumers only
 * once the coordinator has EndTxn(commit) from the producer's current epoch. So:
 * - Until this slot has called commit, the transaction is provably uncommitted: on a failure or at
 *   the deadline the append is rejected at once, and the slot never calls commit for it afterwards
 *   (`expired` is checked between the send and the commit, in the same turn of the event loop). The
 *   open transaction is then aborted by fencing (below), or at the latest by the coordinator after
 *   the transaction timeout.
 * - Once commit has been called, the request may have reached the coordinator even if no answer
 *   came back (the broker hung, the connection broke, the deadline passed): the outcome is unknown,
 *   and answering "not stored" could be a lie. The slot then resolves it. It fences the
 *   transactional id with a fresh producer: InitProducerId makes the coordinator finish the open
 *   transaction first — completing the commit if it holds it, aborting otherwise — and bumps the
 *   epoch, so the old producer can never commit it later. It waits until the partition's last
 *   stable offset has passed the transaction's first record, then reads that offset back with
 *   read_committed: the record is there (committed) or filtered out (aborted). Transactions are all
 *   or nothing, so one record decides for all. This needs a live broker, so it has its own hard
 *   bound (`outcomeTimeoutMs` past the deadline); if even that passes, the append is rejected as
 *   LOG_OUTCOME_UNKNOWN, the one answer that does not promise invisibility.
 */
import type { Kafka, Producer, RecordMetadata, RetryOptions, TopicMessages, Transaction } from 'kafkajs'
import { LogError } from '../errors.js'
import { settleBy, sleep } from './deadline.js'
import type { PartitionReader } from './partition-reader.js'

export type Outcome =
  /** `sent` has the offset of each partition's first record (empty when learnt by reading back) */
  | { kind: 'committed'; sent: RecordMetadata[] }
  /** provably not visible, ever */
  | { kind: 'rejected'; error: LogError }
  /** the commit may or may not have happened */
  | { kind: 'unknown'; error: LogError }

export interface SlotOptions {
  transactionalId: string
  transactionTimeoutMs: number
  /** kafkajs' retry inside one request sequence; the deadline bounds it from outside */
  retry: RetryOptions
  /** reads back a transaction's first record when its outcome is unknown */
  reader: PartitionReader
  /** kafkajs' codec id for the batches sent (codecs.ts registers every codec Kafka has) */
  compression: number
}

const READ_BACK_POLL_MS = 50

/** the place of one send in the arrival order */
export interface SendTurn {
  /** settles when the previous send may no longer overtake this one */
  after: Promise<void>
  /** lets the next send go; idempotent */
  release(): void
}

export class TransactionSlot {
  readonly #kafka: Kafka
  readonly #opts: SlotOptions
  #producer: Producer | undefined

  constructor(kafka: Kafka, opts: SlotOptions) {
    this.#kafka = kafka
    this.#opts = opts
  }

  get ready(): boolean {
    return this.#producer !== undefined
  }

  get transactionalId(): string {
    return this.#opts.transactionalId
  }

  /**
   * Makes this slot usable: a fresh producer whose InitProducerId fences every earlier producer of
   * the same transactional id and completes (or aborts) whatever transaction it left open.
   */
  async fence(at: number): Promise<void> {
    this.#discard()
    const producer = this.#kafka.producer({
      transactionalId: this.#opts.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: this.#opts.transactionTimeoutMs,
      retry: this.#opts.retry,
      allowAutoTopicCreation: false,
    })
    const init = (async () => {
      await producer.connect()
      const txn = await producer.transaction()
      await txn.abort() // nothing was sent in it: kafkajs ends it without a request
    })()
    const done = await settleBy(init, at)
    if (!done.ok) {
      void producer.disconnect().catch(() => undefined)
      throw done.timedOut ? new LogError('LOG_UNAVAILABLE', `fencing ${this.#opts.transactionalId} timed out`) : done.error
    }
    this.#producer = producer
  }

  /**
   * One group commit as one transaction. The slot is left unready unless the commit succeeded.
   * The send waits for `turn.after` (the previous group's send) and releases `turn` once its own
   * send has settled or its deadline passed: sends go out in arrival order, so records of one key
   * keep the order of their appends even across parallel transactions, while commits overlap.
   */
  async commit(topicMessages: TopicMessages[], deadline: number, outcomeDeadline: number, turn: SendTurn): Promise<Outcome> {
    const producer = this.#producer
    if (producer === undefined) throw new Error('commit on a slot that is not ready')
    let expired = false
    let commitCalled = false
    let sent: RecordMetadata[] = []
    const work = (async () => {
      let txn: Transaction
      try {
        await turn.after
        if (expired) return
        txn = await producer.transaction()
        sent = await txn.sendBatch({ topicMessages, acks: -1, compression: this.#opts.compression, timeout: Math.max(1, deadline - Date.now()) })
      } finally {
        turn.release()
      }
      // past the deadline the append was answered "not stored": this transaction must never commit
      if (expired) return
      commitCalled = true
      await txn.commit()
    })()
    const done = await settleBy(work, deadline)
    if (done.ok) return { kind: 'committed', sent }
    expired = true
    turn.release()
    this.#discard()
    if (!commitCalled) {
      const error = done.timedOut
        ? new LogError('LOG_UNAVAILABLE', `no acknowledgement within the produce timeout`)
        : new LogError('LOG_WRITE_FAILED', messageOf(done.error), { cause: done.error })
      return { kind: 'rejected', error }
    }
    return this.#resolve(sent, outcomeDeadline, done.timedOut ? 'the commit was not acknowledged in time' : messageOf(done.error))
  }

  async #resolve(sent: RecordMetadata[], at: number, why: string): Promise<Outcome> {
    const first = sent.find((m) => m.errorCode === 0 && m.baseOffset !== undefined)
    // the commit may have completed, and without an offset there is nothing to read back: only
    // "unknown" is true (the pool fences the discarded slot, so it commits nothing later)
    if (first === undefined) return { kind: 'unknown', error: new LogError('LOG_OUTCOME_UNKNOWN', why) }
    let backoff = 100
    while (Date.now() < at) {
      try {
        await this.fence(at)
        const visible = await this.#readBack(first.topicName, first.partition, Number(first.baseOffset), at)
        if (visible === undefined) break
        if (visible) return { kind: 'committed', sent: [] }
        return { kind: 'rejected', error: new LogError('LOG_WRITE_FAILED', `${why}; the transaction was aborted`) }
      } catch {
        await sleep(Math.min(backoff, Math.max(0, at - Date.now())))
        backoff = Math.min(backoff * 2, 1000)
      }
    }
    this.#discard()
    return { kind: 'unknown', error: new LogError('LOG_OUTCOME_UNKNOWN', why) }
  }

  /** true / false once the record's transaction is complete, undefined at the deadline */
  async #readBack(topic: string, partition: number, offset: number, at: number): Promise<boolean | undefined> {
    const { reader } = this.#opts
    while (Date.now() < at) {
      const stable = await settleBy(reader.offset(topic, partition, false), at)
      if (!stable.ok) {
        if (stable.timedOut) return undefined
        throw stable.error
      }
      if (stable.value > offset) {
        const fetched = await settleBy(reader.fetch(topic, partition, offset, 0), at)
        if (!fetched.ok) {
          if (fetched.timedOut) return undefined
          throw fetched.error
        }
        return fetched.value.messages[0] !== undefined && Number(fetched.value.messages[0].offset) === offset
      }
      await sleep(READ_BACK_POLL_MS)
    }
    return undefined
  }

  #discard(): void {
    const producer = this.#producer
    this.#producer = undefined
    // its requests may still be in flight: disconnecting fails them rather than waiting
    if (producer !== undefined) void producer.disconnect().catch(() => undefined)
  }

  async close(): Promise<void> {
    const producer = this.#producer
    this.#producer = undefined
    await producer?.disconnect().catch(() => undefined)
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
