/**
 * The pieces of kafkajs 2.2.4 its public API does not expose: its Cluster, to send a single Fetch
 * or ListOffsets request without joining a consumer group (a group join per read costs a
 * JoinGroup/SyncGroup round and a rebalance of that throw-away group); its Batch, which drops
 * transaction markers as its own consumer does; the one place to correct how that Batch drops the
 * records of aborted transactions (aborted-filter.ts), for the group consumer and this adapter's
 * reads alike; and a broker's request path, to send a Fetch whose response bytes go to our own
 * decoder (fetch-response.ts) rather than kafkajs'. kafkajs is pinned at 2.2.4 and no longer
 * released, so these internals cannot move underneath; a missing one fails loudly at start-up
 * rather than misbehaving.
 */
import { createRequire } from 'node:module'
import type { Kafka } from 'kafkajs'
import { type AbortedTransaction, committedOnly } from './aborted-filter.js'
// every codec Kafka has, in the registry the lookups below read
import './codecs.js'

const require = createRequire(import.meta.url)

export interface RawMessage {
  offset: string
  timestamp: string
  key: Buffer | null
  value: Buffer | null
  headers?: Record<string, Buffer | Buffer[] | undefined>
  isControlRecord?: boolean
  /** of the record batch the record came in */
  batchContext: { producerId: string; inTransaction: boolean }
}

export interface PartitionData {
  partition: number
  errorCode: number
  highWatermark: string
  lastStableOffset?: string
  abortedTransactions?: AbortedTransaction[]
  messages: RawMessage[]
}

export interface FetchRequest {
  isolationLevel: number
  maxWaitTime: number
  minBytes: number
  maxBytes: number
  topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>
}

/** kafkajs' description of one request: how to encode it and how to read its answer */
interface ProtocolRequest {
  request: { apiVersion: number }
  response: { decode(payload: Buffer): Promise<unknown>; parse(decoded: unknown): Promise<unknown> }
  requestTimeout?: number
}

export interface InternalBroker {
  fetch(request: FetchRequest): Promise<{ responses: Array<{ topicName: string; partitions: PartitionData[] }> }>
  /** the request builder of the highest version both sides speak */
  lookupRequest(apiKey: number, definition: unknown): (request: FetchRequest) => ProtocolRequest
  connectionPool: { send(request: ProtocolRequest): Promise<unknown> }
  disconnect(): Promise<void>
}

export interface InternalCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  isConnected(): boolean
  addTargetTopic(topic: string): Promise<void>
  refreshMetadata(): Promise<void>
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>
  findBroker(query: { nodeId: string }): Promise<InternalBroker>
  fetchTopicsOffset(
    topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>,
  ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>
}

/** Records of one fetched partition: `messages` without aborted records and markers (see correctAbortedFilter). */
export interface InternalBatch {
  readonly messages: RawMessage[]
  readonly rawMessages: RawMessage[]
  /** the raw records from the fetch offset on */
  readonly messagesWithinOffset: RawMessage[]
}

export const READ_COMMITTED = 1

const FETCH_API_KEY = (require('kafkajs/src/protocol/requests/apiKeys.js') as { Fetch: number }).Fetch
const FETCH_DEFINITION = (require('kafkajs/src/protocol/requests/index.js') as { requests: { Fetch: unknown } }).requests.Fetch
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error & { type: string } }
const { lookupCodecByAttributes } = require('kafkajs/src/protocol/message/compression/index.js') as {
  lookupCodecByAttributes(attributes: number): { decompress(compressed: Buffer): Promise<Buffer> } | null
}

/**
 * Sends a Fetch the way `broker.fetch` does (the connection kafkajs keeps for fetches, its
 * timeouts, its handling of a closed connection) but hands the answer's bytes and the version
 * negotiated to `decode`.
 */
export async function fetchRaw<T>(broker: InternalBroker, request: FetchRequest, decode: (payload: Buffer, version: number) => T): Promise<T> {
  const built = broker.lookupRequest(FETCH_API_KEY, FETCH_DEFINITION)(request)
  const version = built.request.apiVersion
  const response = { decode: async (payload: Buffer) => decode(payload, version), parse: async (decoded: unknown) => decoded }
  try {
    return (await broker.connectionPool.send({ ...built, response })) as T
  } catch (err) {
    if ((err as Error).name === 'KafkaJSConnectionClosedError') await broker.disconnect()
    throw err
  }
}

/** kafkajs' error for a Kafka error code: its `type` names the code (OFFSET_OUT_OF_RANGE, …) */
export const errorFromCode = (code: number): Error & { type: string } => createErrorFromCode(code)

/**
 * The codec of a record batch's attributes, null when uncompressed: kafkajs' registry, so gzip
 * works out of the box and other codecs once registered with kafkajs' CompressionCodecs.
 */
export const codecOf = (attributes: number): { decompress(compressed: Buffer): Promise<Buffer> } | null =>
  (attributes & 0x07) === 0 ? null : lookupCodecByAttributes(attributes)

const BatchClass = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, data: PartitionData) => InternalBatch
const BrokerClass = require('kafkajs/src/broker/index.js') as { prototype: InternalBroker }

const CORRECTED = Symbol.for('goalpost.kafkajs.committedOnly')

/**
 * Every Batch — the ones kafkajs' group consumer hands to eachBatch as well as toBatch()'s — gets
 * its `messages` from committedOnly() rather than from kafkajs' faulty filter, which lets records
 * of aborted transactions through. kafkajs assigns `messages` once, in Batch's constructor: an
 * accessor on the prototype takes that assignment over. The constructor keeps no list of aborted
 * transactions, so each Fetch answer lends it, keyed by the records array the Batch keeps as
 * `rawMessages`. Installed once per process, whichever copy of this module loads first.
 */
function correctAbortedFilter(): void {
  const batchProto = BatchClass.prototype as unknown as Record<symbol, boolean>
  if (batchProto[CORRECTED]) return
  const fetch = BrokerClass.prototype.fetch
  if (typeof fetch !== 'function' || Object.getOwnPropertyDescriptor(BatchClass.prototype, 'messages') !== undefined) {
    throw new Error('kafkajs Batch or Broker is not as expected: this adapter needs kafkajs 2.2.4')
  }
  const abortedOf = new WeakMap<RawMessage[], AbortedTransaction[]>()
  BrokerClass.prototype.fetch = async function (this: InternalBroker, request: FetchRequest) {
    const answer = await fetch.call(this, request)
    for (const { partitions } of answer.responses) {
      for (const p of partitions) if (p.abortedTransactions?.length) abortedOf.set(p.messages, p.abortedTransactions)
    }
    return answer
  }
  const committed = new WeakMap<object, RawMessage[]>()
  Object.defineProperty(BatchClass.prototype, 'messages', {
    configurable: true,
    get(this: object): RawMessage[] {
      return committed.get(this) ?? []
    },
    set(this: InternalBatch) {
      committed.set(this, committedOnly(this.messagesWithinOffset, abortedOf.get(this.rawMessages)))
    },
  })
  batchProto[CORRECTED] = true
}
correctAbortedFilter()

export function toBatch(topic: string, fetchedOffset: number, data: PartitionData): InternalBatch {
  return new BatchClass(topic, String(fetchedOffset), data)
}

/** A Cluster with the client's own settings (brokers, timeouts, retry, logger), reading committed records. */
export function createCluster(kafka: Kafka): InternalCluster {
  const key = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster')
  if (key === undefined) throw new Error('kafkajs has no cluster factory: this adapter needs kafkajs 2.2.4')
  const create = (kafka as unknown as Record<symbol, (o: object) => InternalCluster>)[key]
  return create({ metadataMaxAge: 300_000, allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED })
}
