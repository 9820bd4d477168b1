/**
 * Group commit over a small pool of transactional producers. Appends queue in arrival order; each
 * idle producer takes everything queued (up to the group limits) as one transaction, so concurrent
 * appends share a send, and several transactions run in parallel for throughput. Every append is
 * answered by its deadline — committed, or rejected with nothing visible — except while a commit's
 * outcome is being resolved (see transaction-slot.ts), which has a hard bound of its own.
 */
import type { Kafka, RetryOptions } from 'kafkajs'
import { LogError } from '../errors.js'
import { type GroupLimits, type PendingAppend, recordCount, takeGroup, topicMessagesOf } from './pending-append.js'
import { PartitionReader } from './partition-reader.js'
import { type Outcome, type SendTurn, TransactionSlot } from './transaction-slot.js'
import { VisibilityWatcher } from './visibility.js'

export interface PoolOptions extends GroupLimits {
  /** unique per node: the producers are `<prefix>-0` … `<prefix>-<n-1>` */
  transactionalIdPrefix: string
  producers: number
  produceTimeoutMs: number
  outcomeTimeoutMs: number
  transactionTimeoutMs: number
  maxPending: number
  retry: RetryOptions
  /** kafkajs' codec id for every batch (codecs.ts) */
  compression: number
  onError?(err: unknown, where: string): void
}

const RECOVER_MIN_MS = 200
const RECOVER_MAX_MS = 2000

export class ProducerPool {
  readonly #opts: PoolOptions
  readonly #slots: TransactionSlot[]
  readonly #reader: PartitionReader
  readonly #visibility: VisibilityWatcher
  #queue: PendingAppend[] = []
  #queued = 0
  #inFlight = 0
  #healthy = true
  #closed = false
  #expiry: NodeJS.Timeout | undefined
  readonly #recovering = new Set<TransactionSlot>()
  /** slots without a transaction, longest idle first */
  readonly #idle: TransactionSlot[]
  readonly #becomingVisible = new Set<Promise<void>>()
  /** settles when the latest group's send has (see SendTurn) */
  #lastSend: Promise<void> = Promise.resolve()
  #drained: (() => void) | undefined

  constructor(kafka: Kafka, opts: PoolOptions) {
    this.#opts = opts
    this.#reader = new PartitionReader(kafka)
    this.#visibility = new VisibilityWatcher(this.#reader)
    this.#slots = Array.from({ length: opts.producers }, (_, i) => new TransactionSlot(kafka, {
      transactionalId: `${opts.transactionalIdPrefix}-${i}`,
      transactionTimeoutMs: opts.transactionTimeoutMs,
      retry: opts.retry,
      reader: this.#reader,
      compression: opts.compression,
    }))
    this.#idle = [...this.#slots]
  }

  /** Fences every transactional id of this node (a restart aborts what its previous run left open). */
  async start(): Promise<void> {
    const at = Date.now() + Math.max(this.#opts.produceTimeoutMs, 10_000)
    const results = await Promise.allSettled(this.#slots.map((slot) => slot.fence(at)))
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) {
      await this.close()
      const reason: unknown = failed.reason
      throw new LogError('LOG_UNAVAILABLE', `initializing the transactional producers failed: ${reason instanceof Error ? reason.message : String(reason)}`, { cause: reason })
    }
  }

  /** records queued or in a transaction */
  get pending(): number {
    return this.#queued + this.#inFlight
  }

  get healthy(): boolean {
    return this.#healthy && !this.#closed
  }

  submit(append: Omit<PendingAppend, 'deadline' | 'resolve' | 'reject'>): Promise<void> {
    if (this.#closed) return Promise.reject(new LogError('LOG_CLOSED'))
    const pending = this.pending
    if (pending > 0 && pending + append.messages.length > this.#opts.maxPending) {
      return Promise.reject(new LogError('LOG_FULL', `${pending} records wait, the limit is ${this.#opts.maxPending}`))
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...append, deadline: Date.now() + this.#opts.produceTimeoutMs, resolve, reject })
      this.#queued += append.messages.length
      this.#dispatch()
    })
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      // the slot idle longest: its last commit's markers are most likely written, so its next
      // AddPartitionsToTxn is not answered CONCURRENT_TRANSACTIONS (a retry after a backoff)
      const slot = this.#idle.find((s) => s.ready)
      if (slot === undefined) break
      this.#idle.splice(this.#idle.indexOf(slot), 1)
      this.#expire()
      const group = takeGroup(this.#queue, this.#opts)
      this.#queued -= recordCount(group)
      if (group.length > 0) void this.#run(slot, group)
      else this.#idle.unshift(slot)
    }
    this.#armExpiry()
    this.#checkDrained()
  }

  async #run(slot: TransactionSlot, group: PendingAppend[]): Promise<void> {
    const count = recordCount(group)
    this.#inFlight += count
    const deadline = group[0].deadline
    const topicMessages = topicMessagesOf(group)
    let outcome: Outcome
    try {
      outcome = await slot.commit(topicMessages, deadline, deadline + this.#opts.outcomeTimeoutMs, this.#nextTurn())
    } catch (err) {
      outcome = { kind: 'rejected', error: new LogError('LOG_WRITE_FAILED', String(err), { cause: err }) }
    }
    this.#inFlight -= count
    this.#idle.push(slot)
    if (outcome.kind === 'committed') {
      this.#healthy = true
      // the slot is free for the next transaction while this one's markers are written
      const visible = this.#visibility.wait(topicMessages, outcome.sent, deadline).then(() => {
        this.#becomingVisible.delete(visible)
        for (const append of group) append.resolve()
      })
      this.#becomingVisible.add(visible)
    } else {
      this.#healthy = false
      this.#opts.onError?.(outcome.error, `transaction ${slot.transactionalId}`)
      for (const append of group) append.reject(outcome.error)
      if (!slot.ready) this.#recover(slot)
    }
    this.#dispatch()
  }

  #nextTurn(): SendTurn {
    const after = this.#lastSend
    let release!: () => void
    this.#lastSend = new Promise<void>((resolve) => (release = resolve))
    return { after, release }
  }

  /** Fences a broken slot again until it works; a success also proves the broker answers again. */
  #recover(slot: TransactionSlot): void {
    if (this.#recovering.has(slot) || this.#closed) return
    this.#recovering.add(slot)
    void (async () => {
      let wait = RECOVER_MIN_MS
      while (!this.#closed && !slot.ready) {
        try {
          await slot.fence(Date.now() + this.#opts.produceTimeoutMs)
          this.#healthy = true
        } catch (err) {
          this.#opts.onError?.(err, `fencing ${slot.transactionalId}`)
          await new Promise((resolve) => setTimeout(resolve, wait))
          wait = Math.min(wait * 2, RECOVER_MAX_MS)
        }
      }
      this.#recovering.delete(slot)
      this.#dispatch()
    })()
  }

  /** Rejects queued appends whose deadline passed without a producer taking them. */
  #expire(): void {
    const now = Date.now()
    let n = 0
    while (n < this.#queue.length && this.#queue[n].deadline <= now) n++
    if (n === 0) return
    this.#healthy = false
    const error = new LogError('LOG_UNAVAILABLE', 'no producer could take the records within the produce timeout')
    const expired = this.#queue.splice(0, n)
    this.#queued -= recordCount(expired)
    for (const append of expired) append.reject(error)
  }

  #armExpiry(): void {
    clearTimeout(this.#expiry)
    this.#expiry = undefined
    const head = this.#queue[0]
    if (head === undefined) return
    this.#expiry = setTimeout(() => {
      this.#expiry = undefined
      this.#expire()
      this.#dispatch()
    }, Math.max(0, head.deadline - Date.now()))
  }

  #checkDrained(): void {
    if (this.#drained && this.#queue.length === 0 && this.#inFlight === 0) this.#drained()
  }

  /** Refuses new appends, answers every queued one (commit or deadline), then disconnects. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#queue.length > 0 || this.#inFlight > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve
        this.#dispatch()
      })
    }
    clearTimeout(this.#expiry)
    await Promise.all(this.#becomingVisible)
    await Promise.all(this.#slots.map((slot) => slot.close()))
    await this.#reader.close().catch(() => undefined)
  }
}
