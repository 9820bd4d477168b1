/**
 * The config topic on Kafka: one partition, compacted, so every node reads every write in one
 * order and the latest value per key survives. A record per put (version 1):
 *
 *   key     JSON [kind, id]            — compaction keeps the latest per (kind, id)
 *   value   JSON of the value, or null — null is a tombstone: compaction deletes the key
 *   header  goalpost-write: <view id>:<sequence> — which view wrote it, so put() can resolve
 *           once this view's own tail has applied it
 *
 * Writes go through the event log's transactions, so a put is as durable as an append.
 */
import { randomUUID } from 'node:crypto'
import { LogError } from '../errors.js'
import type { ConfigLog, ConfigRecord, Subscription } from '../types.js'
import { checkConfigRecord } from '../validate.js'
import { settleBy } from './deadline.js'
import type { KafkaLog } from './kafka-log.js'
import type { RawMessage } from './kafkajs-internals.js'
import { KafkaTail } from './tail.js'

const WRITE_HEADER = 'goalpost-write'
const READ_CHUNK = 10_000
/** the same read error is logged again after this long, not at every retry */
const REPEAT_LOG_MS = 60_000

interface Applied {
  record: ConfigRecord
  writeId: string | undefined
  offset: number
}

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

function decode(m: RawMessage): Applied {
  const [kind, id] = JSON.parse(m.key?.toString('utf8') ?? '[]') as [string, string]
  const value = m.value === null || m.value.length === 0 ? null : (JSON.parse(m.value.toString('utf8')) as unknown)
  const header = m.headers?.[WRITE_HEADER]
  const writeId = Buffer.isBuffer(header) ? header.toString('utf8') : undefined
  return { record: { kind, id, value }, writeId, offset: Number(m.offset) }
}

/**
 * @example
 * const config = await KafkaConfigLog.open(log, 'goalpost.config')
 * for (const record of await config.load()) apply(record)
 * config.watch(apply)
 * await config.put({ kind: 'site', id: 'example.com', value: { timezone: 'UTC' } })
 */
export class KafkaConfigLog implements ConfigLog {
  readonly #log: KafkaLog
  readonly #topic: string
  readonly #viewId = randomUUID().slice(0, 8)
  readonly #watchers = new Set<(record: ConfigRecord) => void>()
  readonly #waiting = new Map<string, Waiter>()
  readonly #inFlight = new Set<Promise<unknown>>()
  #seq = 0
  /** where this view's tail starts: the end of what load() read */
  #position: number | undefined
  #tail: Promise<Subscription> | undefined
  /** one past the last record this view applied */
  #applied = 0
  readonly #syncs: { until: number; resolve(): void }[] = []
  #closed = false
  /** the tail's latest read failure, until it reads again: why a write is not applied yet */
  #readError: { message: string; at: number } | undefined

  private constructor(log: KafkaLog, topic: string) {
    this.#log = log
    this.#topic = topic
  }

  /** Creates the topic when missing (one partition, compacted). */
  static async open(log: KafkaLog, topic: string): Promise<KafkaConfigLog> {
    await log.createTopic({ name: topic, partitions: 1, compacted: true })
    return new KafkaConfigLog(log, topic)
  }

  /** Every live record as of now, in the order of its latest write; later ones go to watchers. */
  async load(): Promise<ConfigRecord[]> {
    const latest = new Map<string, ConfigRecord>()
    const end = await this.#log.endOffset(this.#topic, 0)
    let position = await this.#log.beginOffset(this.#topic, 0)
    while (position < end) {
      const records = await this.#log.read(this.#topic, 0, position, READ_CHUNK)
      if (records.length === 0) break
      for (const r of records) {
        const [kind, id] = JSON.parse(r.key) as [string, string]
        const key = r.key
        latest.delete(key) // re-inserted below: Map order is then the order of latest writes
        if (r.value.length > 0) latest.set(key, { kind, id, value: JSON.parse(r.value.toString('utf8')) })
      }
      position = records[records.length - 1].offset + 1
    }
    this.#position ??= end
    this.#applied = Math.max(this.#applied, end)
    return [...latest.values()]
  }

  /** Durable, then resolves once this view's watchers have applied it (in log order). */
  put(record: ConfigRecord): Promise<void> {
    const done = this.#put(record)
    const tracked = done.catch(() => undefined).finally(() => this.#inFlight.delete(tracked))
    this.#inFlight.add(tracked)
    return done
  }

  async #put(record: ConfigRecord): Promise<void> {
    if (this.#closed) throw new LogError('LOG_CLOSED')
    const json = checkConfigRecord(record)
    const { kind, id } = record
    await this.#startTail()
    const writeId = `${this.#viewId}:${++this.#seq}`
    const applied = new Promise<void>((resolve, reject) => this.#waiting.set(writeId, { resolve, reject }))
    try {
      await this.#log.produce(this.#topic, [{
        key: JSON.stringify([kind, id]),
        value: json === null ? null : Buffer.from(json),
        headers: { [WRITE_HEADER]: writeId },
        partition: 0,
        timestamp: String(Date.now()),
      }])
    } catch (err) {
      this.#waiting.delete(writeId)
      throw err
    }
    const timeout = this.#log.options.produceTimeoutMs ?? 5000
    const outcome = await settleBy(applied, Date.now() + timeout)
    this.#waiting.delete(writeId)
    if (outcome.ok) return
    if (outcome.timedOut) {
      const why = this.#readError ? `reading ${this.#topic} fails: ${this.#readError.message}` : `${this.#topic} was not read back within ${timeout} ms`
      throw new LogError('LOG_NOT_APPLIED', `config ${kind}/${id} is stored in ${this.#topic}, but ${why}; it takes effect once this node reads it, and need not be written again`)
    }
    throw outcome.error
  }

  watch(handler: (record: ConfigRecord) => void): void {
    this.#watchers.add(handler)
    void this.#startTail().catch(() => undefined)
  }

  #startTail(): Promise<Subscription> {
    this.#tail ??= (async () => {
      const from = this.#position ?? (await this.#log.endOffset(this.#topic, 0))
      return new KafkaTail(this.#log.kafka, {
        topic: this.#topic,
        partition: 0,
        from,
        map: decode,
        handler: (items) => this.#apply(items),
        onPosition: (next) => this.#reached(next),
        onTransientError: (err, position) => this.#readFailed(err, position),
      })
    })()
    return this.#tail
  }

  /**
   * Resolves once this view applied everything the topic held when called (a site created on
   * another node a moment ago), or rejects after the produce timeout.
   */
  async sync(): Promise<void> {
    const end = await this.#log.endOffset(this.#topic, 0)
    await this.#startTail()
    if (this.#applied >= end) return
    const reached = new Promise<void>((resolve) => this.#syncs.push({ until: end, resolve }))
    const outcome = await settleBy(reached, Date.now() + (this.#log.options.produceTimeoutMs ?? 5000))
    if (!outcome.ok) throw new LogError('LOG_UNAVAILABLE', `the config topic ${this.#topic} did not catch up in time`)
  }

  /** Logs a read failure once, then again only when it changes or a minute has passed. */
  #readFailed(err: unknown, position: number): void {
    const message = `partition 0 at offset ${position}: ${err instanceof Error ? err.message : String(err)}`
    const last = this.#readError
    const now = Date.now()
    if (last?.message === message && now - last.at < REPEAT_LOG_MS) return
    this.#readError = { message, at: now }
    this.#log.options.onError?.(err, `reading ${this.#topic} ${message} (retried until it reads)`)
  }

  #apply(items: Applied[]): void {
    this.#readError = undefined
    for (const { record, writeId, offset } of items) {
      this.#applied = Math.max(this.#applied, offset + 1)
      const waiter = writeId === undefined ? undefined : this.#waiting.get(writeId)
      try {
        // freshly parsed from the log: the watchers' own copy
        for (const watcher of this.#watchers) watcher(record)
        waiter?.resolve()
      } catch (err) {
        // a watcher's failure belongs to the writer that waits for it; others only hear of it
        if (waiter) waiter.reject(err)
        else this.#log.options.onError?.(err, `applying config ${record.kind}/${record.id}`)
      }
    }
    this.#reached(this.#applied)
  }

  /** the tail is past `next`: commit markers count, so a sync ends even when the last offset is one */
  #reached(next: number): void {
    this.#readError = undefined
    this.#applied = Math.max(this.#applied, next)
    for (let i = this.#syncs.length - 1; i >= 0; i--) {
      const s = this.#syncs[i]
      if (this.#applied >= s.until) {
        this.#syncs.splice(i, 1)
        s.resolve()
      }
    }
  }

  /** Refuses further puts, waits for this view's own, stops reading; the log stays open. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(this.#inFlight)
    const tail = await this.#tail?.catch(() => undefined)
    await tail?.close().catch(() => undefined)
    this.#watchers.clear()
  }
}
