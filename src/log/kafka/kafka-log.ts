/**
 * The event log on Apache Kafka through kafkajs: topics created when missing, appends as group
 * commits in transactions (acks=all) so that a batch is all or nothing and a rejected append never
 * becomes visible, and every read at read_committed. Offsets are Kafka's: increasing but not dense,
 * since each transaction's commit marker takes an offset too.
 */
import { Kafka, logLevel, type Admin, type ISocketFactory, type LogEntry, type Message } from 'kafkajs'
import { LogError } from '../errors.js'
import type {
  EventLog,
  GroupListener,
  PartitionWriter,
  LogRecord,
  MemberInfo,
  Membership,
  ProducerRecord,
  RecordHandler,
  Subscription,
  TopicSpec,
} from '../types.js'
import { checkCount, checkRecord, checkTopicSpec } from '../validate.js'
import { CODEC_IDS, type Compression } from './compression.js'
import { joinGroup } from './group-member.js'
import { isOutOfRange, PartitionReader } from './partition-reader.js'
import { kafkaPartitionOf } from './partitioner.js'
import { KafkaPartitionWriter } from './partition-writer.js'
import { ProducerPool } from './producer-pool.js'
import { type Fetched, ReadAhead } from './read-ahead.js'
import { eventTail, KafkaTail } from './tail.js'
import { VisibilityWatcher } from './visibility.js'

export interface KafkaLogOptions {
  /** host:port of one or more brokers */
  brokers: string[]
  /**
   * Unique per node and stable across its restarts (e.g. derived from the advertised URL): it names
   * this node's transactional producers `<clientId>-<nodeId>-<i>`, so a restarted node fences and
   * aborts what its previous run left open instead of waiting for the transaction timeout.
   */
  nodeId: string
  /** kafkajs client id and the transactional ids' prefix (default `goalpost`) */
  clientId?: string
  /** how long open() waits for a broker that is still starting (default 60 000) */
  connectTimeoutMs?: number
  /** an append is answered by then (default 5000) — see transaction-slot.ts for the one exception */
  produceTimeoutMs?: number
  /** hard bound, past the produce timeout, for learning a commit's outcome (default 30 000) */
  outcomeTimeoutMs?: number
  /** group members that miss heartbeats this long lose their partitions (default 10 000) */
  sessionTimeoutMs?: number
  /** transactional producers running group commits in parallel (default 4) */
  producers?: number
  /** appends are refused with LOG_FULL while this many records wait (default 100 000) */
  maxPending?: number
  /**
   * most records / bytes in one transaction (defaults 2 000 / 768 KiB); one larger append goes
   * alone. kafkajs groups a send's records by partition at a cost that grows with the square of
   * each partition's records (partition-writer.ts): 2 000 small records cost ~14 ms in one turn
   */
  commitMaxRecords?: number
  commitMaxBytes?: number
  /** replicas of created topics (default: the broker's default.replication.factor) */
  replicationFactor?: number
  /** the coordinator aborts a transaction left open this long (default 15 000) */
  transactionTimeoutMs?: number
  /** a claimed partition's writer (claim) fails a claim or an append not done by then (default 30 000) */
  writerTimeoutMs?: number
  /** failures the log recovers from by itself (a failed transaction, a broken connection) */
  onError?(err: unknown, where: string): void
  /**
   * kafkajs' socket factory, e.g. to reach brokers through a tunnel; tests use it to hang the
   * broker at an exact request
   */
  socketFactory?: ISocketFactory
  /**
   * the codec of every batch this log produces, events, config and changelog alike (default
   * none); whatever a topic holds is read, every codec Kafka has (codecs.ts)
   */
  compression?: Compression
  /** kafkajs' own log lines at warn and error level */
  onClientLog?(level: 'warn' | 'error', message: string, extra: Record<string, unknown>): void
}

/** how long creating a topic may keep meeting retriable errors */
const CREATE_TOPIC_MS = 20_000

/** per-record overhead of Kafka's record format, for the group's byte budget */
const RECORD_OVERHEAD = 70

/**
 * @example
 * const log = await KafkaLog.open({ brokers: ['127.0.0.1:9092'], nodeId: 'node-a' })
 * await log.createTopic({ name: 'goalpost.events', partitions: 8, retentionMs: 90 * 86_400_000 })
 * await log.append('goalpost.events', [{ key: 'site:session', value: Buffer.from('{}'), timestamp: Date.now() }])
 */
export class KafkaLog implements EventLog {
  readonly kafka: Kafka
  readonly options: Readonly<KafkaLogOptions>
  readonly #admin: Admin
  readonly #reader: PartitionReader
  readonly #ahead = new ReadAhead()
  readonly #pool: ProducerPool
  readonly #partitions = new Map<string, number>()
  readonly #tails = new Set<KafkaTail<LogRecord>>()
  readonly #memberships = new Set<Membership>()
  /** claimed partitions' writers, and how they learn that their records are readable */
  readonly #writers = new Set<KafkaPartitionWriter>()
  readonly #writersReader: PartitionReader
  readonly #writersVisibility: VisibilityWatcher
  #closed = false
  #closing: Promise<void> | undefined

  private constructor(opts: KafkaLogOptions) {
    this.options = opts
    const clientId = opts.clientId ?? 'goalpost'
    const onClientLog = opts.onClientLog
    this.kafka = new Kafka({
      clientId,
      brokers: opts.brokers,
      socketFactory: opts.socketFactory,
      connectionTimeout: 3000,
      // a hung broker is detected by the produce deadline; short retries keep a transaction's
      // requests (AddPartitionsToTxn right after the previous commit answers CONCURRENT_TRANSACTIONS
      // until its markers are written) from idling hundreds of milliseconds
      retry: { initialRetryTime: 20, maxRetryTime: 1000, retries: 8 },
      logLevel: onClientLog ? logLevel.WARN : logLevel.NOTHING,
      logCreator: () => (entry: LogEntry) => {
        const { message, ...extra } = entry.log
        if (creationErrors(message, extra)) return
        onClientLog?.(entry.level === logLevel.ERROR ? 'error' : 'warn', message, extra)
      },
    })
    this.#admin = this.kafka.admin()
    this.#reader = new PartitionReader(this.kafka)
    this.#writersReader = new PartitionReader(this.kafka)
    this.#writersVisibility = new VisibilityWatcher(this.#writersReader)
    const produceTimeoutMs = opts.produceTimeoutMs ?? 5000
    this.#pool = new ProducerPool(this.kafka, {
      transactionalIdPrefix: `${clientId}-${opts.nodeId}`,
      producers: opts.producers ?? 4,
      produceTimeoutMs,
      outcomeTimeoutMs: opts.outcomeTimeoutMs ?? 30_000,
      transactionTimeoutMs: opts.transactionTimeoutMs ?? 15_000,
      maxPending: opts.maxPending ?? 100_000,
      maxRecords: opts.commitMaxRecords ?? 2_000,
      maxBytes: opts.commitMaxBytes ?? 768 * 1024,
      retry: { initialRetryTime: 20, maxRetryTime: 500, retries: 10 },
      compression: CODEC_IDS[opts.compression ?? 'none'],
      onError: opts.onError,
    })
  }

  /** Connects, learns the existing topics and fences this node's transactional ids. */
  static async open(opts: KafkaLogOptions): Promise<KafkaLog> {
    if (!Array.isArray(opts.brokers) || opts.brokers.length === 0) throw new LogError('LOG_BAD_ARGUMENT', 'brokers must name at least one host:port')
    if (typeof opts.nodeId !== 'string' || !/^[A-Za-z0-9._-]+$/.test(opts.nodeId)) {
      throw new LogError('LOG_BAD_ARGUMENT', `nodeId must be 1 or more of [A-Za-z0-9._-], got ${JSON.stringify(opts.nodeId)}`)
    }
    // a broker that is still starting (its coordinators loading) answers with retriable errors: a
    // node started beside it waits for it, within a bound, instead of failing at once
    const deadline = Date.now() + (opts.connectTimeoutMs ?? 60_000)
    for (let pause = 250; ; pause = Math.min(pause * 2, 2000)) {
      const log = new KafkaLog(opts)
      try {
        await log.#admin.connect()
        const { topics } = await log.#admin.fetchTopicMetadata()
        for (const t of topics) log.#partitions.set(t.name, t.partitions.length)
        await log.#pool.start()
        return log
      } catch (err) {
        await log.close().catch(() => undefined)
        if (err instanceof LogError) throw err
        if (!transient(err) || Date.now() + pause > deadline) {
          throw new LogError('LOG_UNAVAILABLE', `cannot reach Kafka at ${opts.brokers.join(',')}: ${(err as Error).message}`, { cause: err })
        }
        opts.onError?.(err, 'connecting (the broker may still be starting)')
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
    }
  }

  /**
   * Creates the topic when missing (`compacted` sets cleanup.policy=compact, `retentionMs`
   * retention.ms). An existing topic with another partition count is refused (LOG_TOPIC_CONFLICT);
   * a broker's refusal is reported with its reason (LOG_REFUSED).
   */
  async createTopic(spec: TopicSpec): Promise<void> {
    checkTopicSpec(spec)
    this.#checkOpen()
    const configEntries: Array<{ name: string; value: string }> = []
    if (spec.retentionMs !== undefined) configEntries.push({ name: 'retention.ms', value: String(Math.round(spec.retentionMs)) })
    if (spec.compacted) configEntries.push({ name: 'cleanup.policy', value: 'compact' })
    if (spec.maxMessageBytes !== undefined) configEntries.push({ name: 'max.message.bytes', value: String(spec.maxMessageBytes) })
    // an existing topic (created by an operator, or by another node) is taken as it is: asking to
    // create it again makes kafkajs log the broker's TOPIC_ALREADY_EXISTS as an error
    const deadline = Date.now() + CREATE_TOPIC_MS
    let actual = await this.#learn(spec.name)
    if (actual === undefined) await this.#create(spec, configEntries)
    // a topic another node is creating this moment shows without partitions for a while
    for (let pause = 100; (actual = await this.#learn(spec.name)) === undefined && Date.now() + pause < deadline; pause = Math.min(pause * 2, 1000)) {
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
    actual ??= 0
    if (actual !== spec.partitions) {
      throw new LogError('LOG_TOPIC_CONFLICT', `${spec.name} has ${actual} partitions, not ${spec.partitions}`)
    }
  }

  async #create(spec: TopicSpec, configEntries: Array<{ name: string; value: string }>): Promise<void> {
    // a topic just created may not be known to every part of the broker yet ("does not host this
    // topic-partition"): such errors are retriable, and creating an existing topic changes nothing
    const deadline = Date.now() + CREATE_TOPIC_MS
    for (let pause = 100; ; pause = Math.min(pause * 2, 1000)) {
      try {
        await this.#admin.createTopics({
          topics: [{ topic: spec.name, numPartitions: spec.partitions, replicationFactor: this.options.replicationFactor ?? -1, configEntries }],
          waitForLeaders: true,
        })
        break
      } catch (err) {
        if (!transient(err) || Date.now() + pause > deadline) {
          throw new LogError('LOG_REFUSED', `creating topic ${spec.name}: ${refusal(err)}`, { cause: err })
        }
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
    }
  }

  /**
   * The partition count of a topic as the broker knows it now, remembered; undefined when it does
   * not exist. A topic created after open() (by an operator, another node or a test) is learnt here.
   */
  async #learn(topic: string): Promise<number | undefined> {
    const { topics } = await this.#admin.fetchTopicMetadata({ topics: [topic] }).catch((err: unknown) => {
      // missing, or still being created (no leaders yet): not known now
      if ((err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION' || transient(err)) return { topics: [] }
      throw err
    })
    const found = topics.find((t) => t.name === topic)
    const n = found?.partitions.some((p) => p.partitionErrorCode !== 0) ? 0 : found?.partitions.length
    if (n !== undefined && n > 0) this.#partitions.set(topic, n)
    return n !== undefined && n > 0 ? n : undefined
  }

  /** like #checkPartition, for a topic this log may not have seen yet */
  async #checkKnown(topic: string, partition: number): Promise<void> {
    if (!this.#partitions.has(topic)) await this.#learn(topic)
    this.#checkPartition(topic, partition)
  }

  partitionsOf(topic: string): number {
    const n = this.#partitions.get(topic)
    if (n === undefined) throw new LogError('LOG_UNKNOWN_TOPIC', topic)
    return n
  }

  partitionFor(topic: string, key: string): number {
    return kafkaPartitionOf(key, this.partitionsOf(topic))
  }

  append(topic: string, records: ProducerRecord[]): Promise<void> {
    if (!this.#partitions.has(topic) && !this.#closed) {
      // a topic created outside this log since open(): learnt once, then appended to as any other
      return this.#learn(topic).then(() => this.#append(topic, records))
    }
    return this.#append(topic, records)
  }

  #append(topic: string, records: ProducerRecord[]): Promise<void> {
    try {
      this.#checkOpen()
      const partitions = this.partitionsOf(topic)
      if (!Array.isArray(records)) throw new LogError('LOG_BAD_ARGUMENT', 'records must be an array')
      if (records.length === 0) return Promise.resolve()
      const messages: Message[] = []
      let bytes = 0
      records.forEach((record, i) => {
        checkRecord(record, i)
        if (record.partition !== undefined && !(Number.isInteger(record.partition) && record.partition >= 0 && record.partition < partitions)) {
          throw new LogError('LOG_BAD_ARGUMENT', `records[${i}]: ${topic} has no partition ${record.partition}`)
        }
        messages.push({
          key: record.key,
          value: record.value,
          timestamp: String(record.timestamp),
          partition: record.partition ?? kafkaPartitionOf(record.key, partitions),
        })
        bytes += record.value.length + record.key.length + RECORD_OVERHEAD
      })
      return this.#pool.submit({ topic, messages, bytes })
    } catch (err) {
      return Promise.reject(err)
    }
  }

  /**
   * Appends prepared Kafka messages (headers, null values for compaction tombstones) through the
   * same transactions; each message must name its partition. Not part of EventLog.
   */
  produce(topic: string, messages: Message[]): Promise<void> {
    if (this.#closed) return Promise.reject(new LogError('LOG_CLOSED'))
    const bytes = messages.reduce((n, m) => n + (m.value?.length ?? 0) + RECORD_OVERHEAD, 0)
    return this.#pool.submit({ topic, messages, bytes })
  }

  async beginOffset(topic: string, partition: number): Promise<number> {
    await this.#checkKnown(topic, partition)
    return this.#reader.offset(topic, partition, true)
  }

  /** Kafka's last stable offset: past every committed record, and past its commit marker. */
  async endOffset(topic: string, partition: number): Promise<number> {
    await this.#checkKnown(topic, partition)
    return this.#reader.offset(topic, partition, false)
  }

  /**
   * Fetches from `from` until `max` records are read or the last stable offset is reached; what a
   * fetch brings beyond `max` is kept for the read that continues there (read-ahead.ts).
   */
  async read(topic: string, partition: number, from: number, max: number): Promise<LogRecord[]> {
    checkCount('from', from)
    checkCount('max', max)
    await this.#checkKnown(topic, partition)
    if (max === 0) return []
    const out: LogRecord[] = []
    let position = from
    let pending: Fetched | undefined = this.#ahead.take(topic, partition, position)
    for (;;) {
      if (pending === undefined) {
        try {
          const fetched = await this.#reader.records(topic, partition, position, 0, fetchBytes(max - out.length))
          // nothing committed lies past the last stable offset: no need to ask again
          pending = { records: fetched.records, next: fetched.next, end: fetched.next >= fetched.stable }
        } catch (err) {
          if (!isOutOfRange(err)) throw err
          // below the retained head (retention deleted it): start at the head; else past the end
          const begin = await this.beginOffset(topic, partition)
          if (begin <= position) return out
          position = begin
          continue
        }
      }
      const { records, next } = pending
      const room = max - out.length
      if (records.length > room) {
        for (let i = 0; i < room; i++) out.push(records[i])
        this.#ahead.keep(topic, partition, { from: out[out.length - 1].offset + 1, records: records.slice(room), next, end: pending.end })
        return out
      }
      for (const record of records) out.push(record)
      if (next <= position || pending.end || out.length === max) return out
      position = next
      pending = undefined
    }
  }

  subscribe(topic: string, partition: number, from: number, handler: RecordHandler): Subscription {
    checkCount('from', from)
    this.#checkOpen()
    this.#checkPartition(topic, partition)
    const onTransientError = (err: unknown, position: number): void => this.options.onError?.(err, `fetching ${topic}/${partition} at offset ${position}`)
    const tail = new KafkaTail(this.kafka, eventTail({ topic, partition, from, handler, onTransientError }))
    this.#tails.add(tail)
    return {
      close: async () => {
        this.#tails.delete(tail)
        await tail.close()
      },
    }
  }

  async join(topic: string, group: string, member: MemberInfo, listener: GroupListener): Promise<Membership> {
    this.#checkOpen()
    if (!this.#partitions.has(topic)) await this.#learn(topic)
    const membership = await joinGroup({
      kafka: this.kafka,
      admin: this.#admin,
      reader: this.#reader,
      topic,
      partitions: this.partitionsOf(topic),
      group,
      member,
      listener,
      sessionTimeoutMs: this.options.sessionTimeoutMs ?? 10_000,
      onError: this.options.onError,
    })
    const tracked: Membership = {
      members: () => membership.members(),
      owned: () => membership.owned(),
      current: () => membership.current?.() ?? true,
      restart: (partitions) => membership.restart?.(partitions),
      leave: async () => {
        this.#memberships.delete(tracked)
        await membership.leave()
      },
    }
    this.#memberships.add(tracked)
    return tracked
  }

  /**
   * A transactional producer whose transactional id is `writerId` (partition-writer.ts): its
   * InitProducerId fences every earlier producer of the id and completes what it left open.
   */
  async claim(topic: string, partition: number, writerId: string): Promise<PartitionWriter> {
    this.#checkOpen()
    await this.#checkKnown(topic, partition)
    const writer = await KafkaPartitionWriter.claim(this.kafka, {
      topic,
      partition,
      transactionalId: writerId,
      transactionTimeoutMs: this.options.transactionTimeoutMs ?? 15_000,
      timeoutMs: this.options.writerTimeoutMs ?? 30_000,
      retry: { initialRetryTime: 50, maxRetryTime: 1000, retries: 12 },
      visibility: this.#writersVisibility,
      compression: CODEC_IDS[this.options.compression ?? 'none'],
    })
    if (this.#closed) {
      await writer.close()
      throw new LogError('LOG_CLOSED')
    }
    this.#writers.add(writer)
    return {
      append: (records) => writer.append(records),
      get usable() {
        return writer.usable
      },
      close: async () => {
        this.#writers.delete(writer)
        await writer.close()
      },
    }
  }

  pending(): number {
    return this.#pool.pending
  }

  healthy(): boolean {
    return !this.#closed && this.#pool.healthy
  }

  /** Answers every queued append, leaves groups, stops subscriptions, then disconnects. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown()
    return this.#closing
  }

  async #shutdown(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
    await Promise.allSettled([...this.#memberships].map((m) => m.leave()))
    await Promise.allSettled([...this.#tails].map((t) => t.close()))
    await Promise.allSettled([...this.#writers].map((w) => w.close()))
    await this.#writersReader.close().catch(() => undefined)
    this.#ahead.clear()
    await this.#reader.close().catch(() => undefined)
    await this.#admin.disconnect().catch(() => undefined)
  }

  #checkOpen(): void {
    if (this.#closed) throw new LogError('LOG_CLOSED')
  }

  #checkPartition(topic: string, partition: number): void {
    const n = this.partitionsOf(topic)
    if (!Number.isInteger(partition) || partition < 0 || partition >= n) {
      throw new LogError('LOG_BAD_ARGUMENT', `${topic} has no partition ${partition}`)
    }
  }
}

/**
 * Bytes to ask a Fetch for when `records` more are wanted: about 1 KiB each (an event is ~0.5 KiB),
 * from 64 KiB up to 4 MiB. A short answer only means another Fetch; the broker always sends at
 * least one whole batch, however large.
 */
const fetchBytes = (records: number): number => Math.min(4 * 1024 * 1024, Math.max(64 * 1024, records * 1024))

/**
 * kafkajs' error line for any CreateTopics answer with per-topic errors, TOPIC_ALREADY_EXISTS among
 * them (another node created the topic first): it names no topic and no error, and createTopic
 * reports every real refusal itself, with the broker's reason
 */
const creationErrors = (message: string, extra: Record<string, unknown>): boolean =>
  message.startsWith('Response CreateTopics') && extra.error === 'Topic creation errors'

/** a broker still settling a new topic, not refusing it */
function transient(err: unknown): boolean {
  const e = err as { retriable?: boolean; message?: string; cause?: unknown }
  // nobody listening at the address: a wrong setting more often than a broker still starting
  if (/Connection error|ECONNREFUSED|ENOTFOUND/i.test(e.message ?? '')) return false
  if (e.retriable) return true
  if (/does not host this topic-partition|no leader|leader not available|not the leader|coordinator is loading|coordinator is not available/i.test(e.message ?? '')) return true
  return e.cause !== undefined && e.cause !== err && transient(e.cause)
}

/** The broker's own words for a refused topic creation (kafkajs wraps them per topic). */
function refusal(err: unknown): string {
  const errors = (err as { errors?: Array<{ message?: string; type?: string }> }).errors
  if (Array.isArray(errors) && errors.length > 0) return errors.map((e) => `${e.type ?? ''} ${e.message ?? ''}`.trim()).join('; ')
  return err instanceof Error ? err.message : String(err)
}
