/**
 * The event log on one machine: topics, partitions and dense offsets, with group commit for
 * durability at throughput. Each commit writes one frame to the topic's data files
 * (topic-files.ts), holding one segment per partition; topics, log starts, config and what the
 * data files hold live in one LevelDB.
 */
import { join } from 'node:path'
import type {
  EventLog,
  GroupListener,
  LogRecord,
  MemberInfo,
  Membership,
  ProducerRecord,
  RecordHandler,
  TopicSpec,
} from '../types.js'
import { AppendJob, type EventBatch, writeEventBatch } from './append-job.js'
import { type BatchOp, CommitQueue } from './commit-queue.js'
import { type FrameWriter, writeFully } from './data-file.js'
import { LogError } from '../errors.js'
import { type BatchWriter, HealingDb } from './healing-db.js'
import { CONFIG_SEQ_KEY, readU64, TOPIC_RANGE, topicKey } from './keys.js'
import { LogPartition } from './partition.js'
import { partitionOf } from './partitioner.js'
import { trimPartition } from './retention.js'
import { joinAlone } from './solo-group.js'
import type { SharedStorage } from './shared-storage.js'
import { TailSubscription, type TailOptions } from './subscription.js'
import { TopicFiles } from './topic-files.js'
import { checkCount, checkRecord, checkTopicSpec } from '../validate.js'

export interface EmbeddedLogOptions {
  /** directory of the LevelDB, with the data files in its segments/ folder; created when missing */
  dir: string
  /** most records in one group commit (default 10 000); one larger append still goes alone */
  commitMaxRecords?: number
  /** appends are refused with LOG_FULL while this many records wait (default 100 000) */
  maxPending?: number
  /** how often retention runs by itself when a topic has one (default 60 s) */
  retentionIntervalMs?: number
  /** subscription tuning: read chunk size and in-memory backlog (defaults 1000 / 10 000) */
  tail?: Partial<TailOptions>
  /** largest data file (default 64 MiB); files start at 64 KiB and double */
  maxFileBytes?: number
  /** replaces the plain LevelDB batch write; tests use it to inject failures */
  writer?: BatchWriter
  /** replaces the plain data file write; tests use it to inject failures */
  frameWriter?: FrameWriter
  /** while writes fail, how often a probe write checks whether they work again (default 200 ms) */
  probeMs?: number
  /** failures nobody awaits (timer-driven retention) and every failed write, for the operator */
  onError?(err: unknown, where: string): void
}

interface TopicState {
  spec: TopicSpec
  files: TopicFiles
  partitions: LogPartition[]
}

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
const MIN_MAX_FILE_BYTES = 64 * 1024
const MAX_MAX_FILE_BYTES = 1024 * 1024 * 1024

/** How a log's topics find their data files. */
interface FilesContext {
  db: HealingDb
  dir: string
  maxFileBytes: number
  probeMs: number
  writer: FrameWriter
  onFailure(err: LogError): void
}

/**
 * @example
 * const log = await EmbeddedLog.open({ dir: './data/log' })
 * await log.createTopic({ name: 'events', partitions: 8, retentionMs: 90 * 86_400_000 })
 * await log.append('events', [{ key: 'site:session', value: Buffer.from('{}'), timestamp: Date.now() }])
 */
export class EmbeddedLog implements EventLog {
  readonly #db: HealingDb
  readonly #files: FilesContext
  readonly #topics: Map<string, TopicState>
  readonly #creating = new Map<string, Promise<void>>()
  readonly #queue: CommitQueue<EventBatch>
  readonly #configQueue: CommitQueue<BatchOp[]>
  readonly #storage: SharedStorage
  readonly #maxPending: number
  readonly #retentionIntervalMs: number
  readonly #tail: TailOptions
  readonly #onError: (err: unknown, where: string) => void
  #retentionTimer: NodeJS.Timeout | undefined
  #retention: Promise<unknown> = Promise.resolve()
  #closed = false
  #closing: Promise<void> | undefined

  private constructor(files: FilesContext, topics: Map<string, TopicState>, configSeq: number, opts: EmbeddedLogOptions) {
    const db = files.db
    this.#db = db
    this.#files = files
    this.#topics = topics
    this.#maxPending = opts.maxPending ?? 100_000
    this.#retentionIntervalMs = opts.retentionIntervalMs ?? 60_000
    this.#tail = { chunk: opts.tail?.chunk ?? 1000, maxBuffered: opts.tail?.maxBuffered ?? 10_000 }
    this.#onError = opts.onError ?? (() => {})
    this.#queue = new CommitQueue<EventBatch>(() => new Map(), writeEventBatch, opts.commitMaxRecords ?? 10_000)
    // config writes are rare: their own group commit keeps LevelDB out of every event batch
    const configQueue = new CommitQueue<BatchOp[]>(() => [], (ops) => db.write(ops), opts.commitMaxRecords ?? 10_000)
    this.#configQueue = configQueue
    const submit = (job: Parameters<CommitQueue<BatchOp[]>['submit']>[0]): Promise<void> =>
      this.#closed ? Promise.reject(new LogError('LOG_CLOSED')) : configQueue.submit(job)
    this.#storage = { db, submit, configSeq }
    this.#scheduleRetention()
  }

  static async open(opts: EmbeddedLogOptions): Promise<EmbeddedLog> {
    const { maxFileBytes = DEFAULT_MAX_FILE_BYTES } = opts
    // an index keeps positions as u32
    if (!Number.isInteger(maxFileBytes) || maxFileBytes < MIN_MAX_FILE_BYTES || maxFileBytes > MAX_MAX_FILE_BYTES) {
      throw new LogError('LOG_BAD_ARGUMENT', `maxFileBytes must be an integer from ${MIN_MAX_FILE_BYTES} to ${MAX_MAX_FILE_BYTES}, got ${maxFileBytes}`)
    }
    const onFailure = (err: LogError): void => opts.onError?.(err, 'write')
    const db = await HealingDb.open({ dir: opts.dir, writer: opts.writer, probeMs: opts.probeMs, onFailure })
    const files: FilesContext = {
      db,
      dir: join(opts.dir, 'segments'),
      maxFileBytes,
      probeMs: opts.probeMs ?? 200,
      writer: opts.frameWriter ?? writeFully,
      onFailure,
    }
    const topics = new Map<string, TopicState>()
    try {
      const specs = await db.read((level) => level.values(TOPIC_RANGE).all())
      for (const value of specs) {
        const spec = JSON.parse(value.toString('utf8')) as TopicSpec
        topics.set(spec.name, await loadTopic(files, spec))
      }
      const seq = await db.read((level) => level.get(CONFIG_SEQ_KEY))
      return new EmbeddedLog(files, topics, seq === undefined ? 0 : readU64(seq, 0), opts)
    } catch (err) {
      for (const topic of topics.values()) await topic.files.close()
      await db.close()
      throw err
    }
  }

  /** The database and group commit, shared with EmbeddedConfigLog; not part of EventLog. */
  get storage(): SharedStorage {
    return this.#storage
  }

  /**
   * Creates the topic, or gives an existing one the new `retentionMs`; a different partition
   * count is refused (LOG_TOPIC_CONFLICT), since it would move keys between partitions.
   * Calls for one name run one after the other.
   */
  async createTopic(spec: TopicSpec): Promise<void> {
    checkTopicSpec(spec)
    this.#checkOpen()
    const before = this.#creating.get(spec.name) ?? Promise.resolve()
    const done = before.catch(() => undefined).then(() => this.#upsertTopic(spec))
    this.#creating.set(spec.name, done)
    try {
      await done
    } finally {
      if (this.#creating.get(spec.name) === done) this.#creating.delete(spec.name)
    }
  }

  async #upsertTopic(spec: TopicSpec): Promise<void> {
    const existing = this.#topics.get(spec.name)
    if (existing && existing.spec.partitions !== spec.partitions) {
      throw new LogError('LOG_TOPIC_CONFLICT', `${spec.name} has ${existing.spec.partitions} partitions`)
    }
    if (existing && existing.spec.retentionMs === spec.retentionMs) return
    const stored: TopicSpec = { name: spec.name, partitions: spec.partitions, retentionMs: spec.retentionMs }
    await this.#db.write([{ type: 'put', key: topicKey(spec.name), value: Buffer.from(JSON.stringify(stored)) }])
    if (existing) existing.spec = stored
    else this.#topics.set(spec.name, await loadTopic(this.#files, stored))
    this.#scheduleRetention()
  }

  partitionsOf(topic: string): number {
    return this.#topic(topic).partitions.length
  }

  partitionFor(topic: string, key: string): number {
    return partitionOf(key, this.#topic(topic).partitions.length)
  }

  append(topic: string, records: ProducerRecord[]): Promise<void> {
    try {
      this.#checkOpen()
      const { partitions } = this.#topic(topic)
      if (!Array.isArray(records)) throw new LogError('LOG_BAD_ARGUMENT', 'records must be an array')
      if (records.length === 0) return Promise.resolve()
      const pending = this.#queue.pending
      if (pending > 0 && pending + records.length > this.#maxPending) {
        throw new LogError('LOG_FULL', `${pending} records wait, the limit is ${this.#maxPending}`)
      }
      const targets: LogPartition[] = []
      records.forEach((record, i) => {
        checkRecord(record, i)
        const target = record.partition ?? partitionOf(record.key, partitions.length)
        if (!partitions[target]) throw new LogError('LOG_BAD_ARGUMENT', `records[${i}]: ${topic} has no partition ${target}`)
        targets.push(partitions[target])
      })
      return this.#queue.submit(new AppendJob(records, targets))
    } catch (err) {
      return Promise.reject(err)
    }
  }

  async beginOffset(topic: string, partition: number): Promise<number> {
    return this.#partition(topic, partition).begin
  }

  async endOffset(topic: string, partition: number): Promise<number> {
    return this.#partition(topic, partition).end
  }

  async read(topic: string, partition: number, from: number, max: number): Promise<LogRecord[]> {
    checkCount('from', from)
    checkCount('max', max)
    this.#checkOpen()
    const part = this.#partition(topic, partition)
    return part.read(from, max, part.end)
  }

  join(topic: string, _group: string, member: MemberInfo, listener: GroupListener): Promise<Membership> {
    return joinAlone(this, topic, member, listener)
  }

  subscribe(topic: string, partition: number, from: number, handler: RecordHandler): TailSubscription {
    checkCount('from', from)
    this.#checkOpen()
    const part = this.#partition(topic, partition)
    const tail = new TailSubscription(part, from, handler, this.#tail)
    part.tails.add(tail)
    return tail
  }

  pending(): number {
    return this.#queue.pending
  }

  /**
   * False from a failed write until a write succeeds again. Appends keep trying meanwhile, and a
   * probe write retries every `probeMs`, so this turns true by itself once the disk takes writes.
   */
  healthy(): boolean {
    return !this.#closed && this.#db.healthy && [...this.#topics.values()].every((t) => t.files.healthy)
  }

  /**
   * Deletes, per partition of every topic with a retention, the records at the head older than
   * `now - retentionMs`, up to the first newer one. Returns how many it deleted. Runs one at a
   * time; it also runs by itself every `retentionIntervalMs`.
   */
  enforceRetention(now = Date.now()): Promise<number> {
    const run = this.#retention.catch(() => undefined).then(async () => {
      this.#checkOpen()
      let deleted = 0
      for (const { spec, files, partitions } of this.#topics.values()) {
        if (spec.retentionMs === undefined) continue
        for (const part of partitions) deleted += await trimPartition(this.#db, part, now - spec.retentionMs)
        await files.deleteBelow((p) => partitions[p]?.begin ?? 0)
      }
      return deleted
    })
    this.#retention = run
    return run
  }

  /** Waits for queued appends to be durable, stops subscriptions, then closes the database. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown()
    return this.#closing
  }

  async #shutdown(): Promise<void> {
    this.#closed = true
    clearInterval(this.#retentionTimer)
    await this.#queue.drain()
    await this.#configQueue.drain()
    const tails = [...this.#topics.values()].flatMap((t) => t.partitions.flatMap((p) => [...p.tails]))
    await Promise.allSettled(tails.map((tail) => tail.close()))
    await this.#retention.catch(() => undefined)
    for (const topic of this.#topics.values()) await topic.files.close()
    await this.#db.close()
  }

  #scheduleRetention(): void {
    if (this.#retentionTimer !== undefined || this.#closed) return
    if (![...this.#topics.values()].some((t) => t.spec.retentionMs !== undefined)) return
    this.#retentionTimer = setInterval(() => {
      // a failed run is retried on the next tick
      if (!this.#closed) this.enforceRetention().catch((err) => this.#onError(err, 'retention'))
    }, this.#retentionIntervalMs)
    this.#retentionTimer.unref()
  }

  #checkOpen(): void {
    if (this.#closed) throw new LogError('LOG_CLOSED')
  }

  #topic(name: string): TopicState {
    const topic = this.#topics.get(name)
    if (!topic) throw new LogError('LOG_UNKNOWN_TOPIC', name)
    return topic
  }

  #partition(topic: string, partition: number): LogPartition {
    const part = this.#topic(topic).partitions[partition]
    if (!Number.isInteger(partition) || !part) {
      throw new LogError('LOG_BAD_ARGUMENT', `${topic} has no partition ${partition}`)
    }
    return part
  }
}

async function loadTopic(files: FilesContext, spec: TopicSpec): Promise<TopicState> {
  // a prefix keeps a topic named "." or ".." inside the directory
  const topicFiles = await TopicFiles.open({ ...files, dir: join(files.dir, `topic-${spec.name}`), topic: spec.name })
  const partitions: LogPartition[] = []
  for (let p = 0; p < spec.partitions; p++) partitions.push(await LogPartition.load(files.db, topicFiles, spec.name, p))
  return { spec, files: topicFiles, partitions }
}
