/**
 * The two pieces of kafkajs 2.2.4 its public API does not expose: its Cluster, to send a single
 * Fetch or ListOffsets request without joining a consumer group (a group join per read costs a
 * JoinGroup/SyncGroup round and a rebalance of that throw-away group), and its Batch, which drops
 * aborted records and transaction markers exactly as its own consumer does. kafkajs is pinned at
 * 2.2.4 and no longer released, so these internals cannot move underneath; a missing one fails
 * loudly at start-up rather than misbehaving.
 */
import { createRequire } from 'node:module'
import type { Kafka } from 'kafkajs'

const require = createRequire(import.meta.url)

export interface RawMessage {
  offset: string
  timestamp: string
  key: Buffer | null
  value: Buffer | null
  headers?: Record<string, Buffer | Buffer[] | undefined>
  isControlRecord?: boolean
}

export interface PartitionData {
  partition: number
  errorCode: number
  highWatermark: string
  lastStableOffset?: string
  abortedTransactions?: unknown[]
  messages: RawMessage[]
}

export interface FetchRequest {
  isolationLevel: number
  maxWaitTime: number
  minBytes: number
  maxBytes: number
  topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>
}

export interface InternalBroker {
  fetch(request: FetchRequest): Promise<{ responses: Array<{ topicName: string; partitions: PartitionData[] }> }>
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

/** Records of one fetched partition: `messages` without aborted records and markers. */
export interface InternalBatch {
  readonly messages: RawMessage[]
  readonly rawMessages: RawMessage[]
}

export const READ_COMMITTED = 1

const BatchClass = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, data: PartitionData) => InternalBatch

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
