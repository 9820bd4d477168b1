/**
 * Fetch responses, versions 4 to 11 (what kafkajs 2.2.4 negotiates with Kafka 3 and 4), decoded
 * down to each partition's header; the record set stays as the bytes the broker sent, for
 * record-batch-v2.ts to walk without building kafkajs' per-message objects.
 *
 *   FetchResponse => throttle_time_ms:INT32 [error_code:INT16 session_id:INT32](v7+) [topics]
 *     topics => topic:STRING [partitions]
 *       partitions => partition:INT32 error_code:INT16 high_watermark:INT64
 *                     last_stable_offset:INT64 [log_start_offset:INT64](v5+)
 *                     [aborted_transactions] [preferred_read_replica:INT32](v11+) records:BYTES
 *         aborted_transactions => producer_id:INT64 first_offset:INT64
 *
 * Arrays are an INT32 count (-1: null), STRING an INT16 length, BYTES an INT32 length (-1: null).
 */

export const MIN_FETCH_VERSION = 4
export const MAX_FETCH_VERSION = 11

export interface AbortedTransaction {
  producerId: number
  /** the transaction's first offset in this partition */
  firstOffset: number
}

export interface FetchedPartition {
  partition: number
  errorCode: number
  highWatermark: number
  /** what read_committed consumers see up to; the broker sends nothing past it */
  lastStableOffset: number
  aborted: AbortedTransaction[]
  /** the record batches, the last one possibly cut short by the fetch's byte limit */
  records: Buffer
}

export interface FetchedTopic {
  topic: string
  partitions: FetchedPartition[]
}

export interface FetchResponse {
  errorCode: number
  topics: FetchedTopic[]
}

/**
 * An INT64 as a number: exact below 2^53, which offsets, timestamps and producer ids stay under
 * (an offset would need 2^53 records).
 */
export function int64(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * 4294967296 + buf.readUInt32BE(at + 4)
}

export function decodeFetchResponse(buf: Buffer, version: number): FetchResponse {
  if (version < MIN_FETCH_VERSION || version > MAX_FETCH_VERSION) throw new RangeError(`Fetch v${version} responses are not decoded here`)
  let at = 4 // throttle_time_ms
  let errorCode = 0
  if (version >= 7) {
    errorCode = buf.readInt16BE(at)
    at += 6 // error_code, session_id
  }
  const topics: FetchedTopic[] = []
  const topicCount = buf.readInt32BE(at)
  at += 4
  for (let t = 0; t < topicCount; t++) {
    const nameLength = buf.readInt16BE(at)
    at += 2
    const topic = buf.toString('utf8', at, at + nameLength)
    at += nameLength
    const partitions: FetchedPartition[] = []
    const partitionCount = buf.readInt32BE(at)
    at += 4
    for (let p = 0; p < partitionCount; p++) {
      const partition = buf.readInt32BE(at)
      const partitionError = buf.readInt16BE(at + 4)
      const highWatermark = int64(buf, at + 6)
      const lastStableOffset = int64(buf, at + 14)
      at += 22
      if (version >= 5) at += 8 // log_start_offset
      const aborted: AbortedTransaction[] = []
      const abortedCount = buf.readInt32BE(at)
      at += 4
      for (let a = 0; a < abortedCount; a++) {
        aborted.push({ producerId: int64(buf, at), firstOffset: int64(buf, at + 8) })
        at += 16
      }
      if (version >= 11) at += 4 // preferred_read_replica
      const size = buf.readInt32BE(at)
      at += 4
      const records = size > 0 ? buf.subarray(at, at + size) : buf.subarray(0, 0)
      at += Math.max(0, size)
      partitions.push({ partition, errorCode: partitionError, highWatermark, lastStableOffset, aborted, records })
    }
    topics.push({ topic, partitions })
  }
  return { errorCode, topics }
}
