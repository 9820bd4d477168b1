/**
 * Reads committed records of one partition with single Fetch and ListOffsets requests on a
 * connection of its own. Kafka answers the requests of one connection in order, so a long-polling
 * tail gets its own reader and never holds up another's short reads.
 */
import type { Kafka } from 'kafkajs'
import type { LogRecord } from '../types.js'
import { decodeFetchResponse } from './fetch-response.js'
import { createCluster, errorFromCode, fetchRaw, type InternalBroker, type InternalCluster, type RawMessage, READ_COMMITTED, toBatch } from './kafkajs-internals.js'
import { readCommitted } from './record-batch-v2.js'

export interface FetchResult {
  /** committed records from the fetch offset on, in offset order, as kafkajs decoded them */
  messages: RawMessage[]
  /** where the next fetch starts: past every record and marker seen (offsets are not dense) */
  next: number
}

const MAX_BYTES = 4 * 1024 * 1024

/** committed event records of one fetch, decoded by record-batch-v2.ts */
export interface RecordsResult {
  records: LogRecord[]
  /** where the next fetch starts: past every record and marker seen (offsets are not dense) */
  next: number
  /** the partition's last stable offset when the broker answered: read_committed sees nothing past it */
  stable: number
}

/** kafkajs error types that a metadata refresh repairs (the leader moved, the topic is new) */
const STALE_METADATA = new Set(['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'NOT_LEADER_OR_FOLLOWER'])

export const isOutOfRange = (err: unknown): boolean => (err as { type?: string })?.type === 'OFFSET_OUT_OF_RANGE'

export class PartitionReader {
  readonly #cluster: InternalCluster
  #connecting: Promise<void> | undefined
  readonly #topics = new Set<string>()

  constructor(kafka: Kafka) {
    this.#cluster = createCluster(kafka)
  }

  async #ready(topic: string): Promise<void> {
    if (!this.#cluster.isConnected()) {
      this.#connecting ??= this.#cluster.connect().finally(() => (this.#connecting = undefined))
      await this.#connecting
    }
    if (!this.#topics.has(topic)) {
      await this.#cluster.addTargetTopic(topic)
      this.#topics.add(topic)
    }
  }

  async #retryStale<T>(topic: string, fn: () => Promise<T>): Promise<T> {
    await this.#ready(topic)
    try {
      return await fn()
    } catch (err) {
      if (!STALE_METADATA.has((err as { type?: string }).type ?? '')) throw err
      await this.#cluster.refreshMetadata()
      return fn()
    }
  }

  /** the earliest retained offset, or (`begin` false) the last stable offset: what read_committed sees */
  offset(topic: string, partition: number, begin: boolean): Promise<number> {
    return this.#retryStale(topic, async () => {
      const [answer] = await this.#cluster.fetchTopicsOffset([{ topic, partitions: [{ partition }], fromBeginning: begin }])
      return Number(answer.partitions[0].offset)
    })
  }

  /** the last stable offsets of several partitions of a topic, in one request */
  stableOffsets(topic: string, partitions: number[]): Promise<Map<number, number>> {
    return this.#retryStale(topic, async () => {
      const [answer] = await this.#cluster.fetchTopicsOffset([{ topic, partitions: partitions.map((partition) => ({ partition })), fromBeginning: false }])
      return new Map(answer.partitions.map((p) => [p.partition, Number(p.offset)]))
    })
  }

  async #leader(topic: string, partition: number): Promise<InternalBroker> {
    const leaders = this.#cluster.findLeaderForPartitions(topic, [partition])
    const nodeId = Object.keys(leaders)[0]
    if (nodeId === undefined) throw Object.assign(new Error(`no leader for ${topic}/${partition}`), { type: 'LEADER_NOT_AVAILABLE' })
    return this.#cluster.findBroker({ nodeId })
  }

  /** One Fetch from `from`: waits up to `maxWaitMs` for data when there is none. */
  fetch(topic: string, partition: number, from: number, maxWaitMs: number): Promise<FetchResult> {
    return this.#retryStale(topic, async () => {
      const broker = await this.#leader(topic, partition)
      const { responses } = await broker.fetch({
        isolationLevel: READ_COMMITTED,
        maxWaitTime: maxWaitMs,
        minBytes: 1,
        maxBytes: MAX_BYTES,
        topics: [{ topic, partitions: [{ partition, fetchOffset: String(from), maxBytes: MAX_BYTES }] }],
      })
      const data = responses[0]?.partitions[0]
      if (data === undefined) return { messages: [], next: from }
      const batch = toBatch(topic, from, data)
      const raw = batch.rawMessages
      // the last raw entry may be a marker or an aborted record: step past it all the same
      const last = raw.length > 0 ? Number(raw[raw.length - 1].offset) : from - 1
      return { messages: batch.messages, next: Math.max(from, last + 1) }
    })
  }

  /**
   * The event records of one Fetch from `from`, up to about `maxBytes` of them, decoded from the
   * record batches' bytes (record-batch-v2.ts) rather than by kafkajs. Waits up to `maxWaitMs` for
   * data when there is none.
   */
  records(topic: string, partition: number, from: number, maxWaitMs: number, maxBytes = MAX_BYTES): Promise<RecordsResult> {
    return this.#retryStale(topic, async () => {
      const broker = await this.#leader(topic, partition)
      const response = await fetchRaw(broker, {
        isolationLevel: READ_COMMITTED,
        maxWaitTime: maxWaitMs,
        minBytes: 1,
        maxBytes,
        topics: [{ topic, partitions: [{ partition, fetchOffset: String(from), maxBytes }] }],
      }, decodeFetchResponse)
      if (response.errorCode !== 0) throw errorFromCode(response.errorCode)
      const data = response.topics[0]?.partitions[0]
      if (data === undefined) return { records: [], next: from, stable: from }
      if (data.errorCode !== 0) throw errorFromCode(data.errorCode)
      const { records, next } = await readCommitted(data, from, topic)
      return { records, next, stable: data.lastStableOffset }
    })
  }

  async close(): Promise<void> {
    await this.#cluster.disconnect()
  }
}

export function toLogRecord(m: Pick<RawMessage, 'key' | 'value' | 'timestamp' | 'offset'>, partition: number): LogRecord {
  return {
    key: m.key === null ? '' : m.key.toString('utf8'),
    value: m.value ?? Buffer.alloc(0),
    timestamp: Number(m.timestamp),
    partition,
    offset: Number(m.offset),
  }
}
