/**
 * Argument checks shared by every log implementation. They run before anything is queued, so a
 * bad record rejects its whole append and never reaches a batch.
 */
import { LogError } from './errors.js'
import type { ConfigRecord, ProducerRecord, TopicSpec } from './types.js'

/** Longest topic name, as in Kafka (the embedded log also keeps the length in one byte). */
export const MAX_TOPIC_BYTES = 249
export const MAX_KIND_BYTES = 255

/** Kafka's rule for topic names, so both implementations accept the same names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]+$/
export const MAX_PARTITIONS = 65536

function bad(detail: string): LogError {
  return new LogError('LOG_BAD_ARGUMENT', detail)
}

export function checkTopicSpec(spec: TopicSpec): void {
  const { name, partitions, retentionMs } = spec
  if (typeof name !== 'string' || !TOPIC_NAME.test(name) || name.length > MAX_TOPIC_BYTES) {
    throw bad(`topic name must be 1-${MAX_TOPIC_BYTES} of [A-Za-z0-9._-], got ${JSON.stringify(name)}`)
  }
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    throw bad(`partitions must be an integer 1-${MAX_PARTITIONS}, got ${partitions}`)
  }
  if (retentionMs !== undefined && !(Number.isFinite(retentionMs) && retentionMs > 0)) {
    throw bad(`retentionMs must be a positive number, got ${retentionMs}`)
  }
}

export function checkRecord(record: ProducerRecord, index: number): void {
  if (record === null || typeof record !== 'object') throw bad(`record ${index} is not an object`)
  if (typeof record.key !== 'string') throw bad(`record ${index}: key must be a string`)
  if (!Buffer.isBuffer(record.value)) throw bad(`record ${index}: value must be a Buffer`)
  if (!Number.isFinite(record.timestamp) || record.timestamp < 0) {
    throw bad(`record ${index}: timestamp must be epoch milliseconds, got ${record.timestamp}`)
  }
}

export function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw bad(`${name} must be a non-negative integer, got ${value}`)
  }
}

/** Checks a config record and returns its value as JSON, or null for a delete. */
export function checkConfigRecord(record: ConfigRecord): string | null {
  const { kind, id, value } = record
  if (typeof kind !== 'string' || kind.length === 0 || Buffer.byteLength(kind) > MAX_KIND_BYTES) {
    throw bad(`config kind must be 1-${MAX_KIND_BYTES} bytes`)
  }
  if (typeof id !== 'string' || id.length === 0) throw bad('config id must be a non-empty string')
  if (value === null) return null
  const json = JSON.stringify(value)
  if (json === undefined) throw bad(`config ${kind}/${id}: value is not JSON`)
  return json
}
