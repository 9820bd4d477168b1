/**
 * Segment, version 2 — the records one group commit appends to one partition, stored in a data
 * file's frame (frame-v1.ts) with the offset of its first record; the records after it take the
 * next offsets, densely. (A LevelDB value under a record key, keys.ts, may hold one too.)
 *
 *   version:u8 = 2 | count:u32
 *   | count × ( timestamp:f64 | keyLen:u32 | valueLen:u32 )   the table
 *   | every key:utf8, in order | every value:bytes, in order
 *
 * Keys sit together so that a segment's keys are encoded with one string write (a write per key
 * cost more than the rest of the encoding), and the table lets retention read timestamps and a
 * reader skip records without touching their bytes.
 *
 * A version 1 value (record-v1.ts, one LevelDB value per record, as the log stored before
 * segments) is a segment of one record: every reader here takes both, so a log written before
 * segments reads on.
 */
import type { LogRecord } from '../types.js'
import { decodeRecordV1, recordTimestamp, type StoredRecord } from './record-v1.js'

const VERSION = 2
const HEADER = 1 + 4
const ENTRY = 8 + 4 + 4
const RECORD_V1 = 1

/** Bytes a segment of `count` records takes besides its keys' and values' bytes. */
export function segmentOverhead(count: number): number {
  return HEADER + count * ENTRY
}

/** A segment measured for writing: its size is known before a buffer is allocated. */
export interface SegmentPlan {
  readonly records: readonly StoredRecord[]
  /** bytes the segment takes */
  readonly bytes: number
  /** every key, joined, when all are ASCII (written in one go); null otherwise */
  readonly asciiKeys: string | null
}

export function planSegmentV2(records: readonly StoredRecord[]): SegmentPlan {
  const count = records.length
  let keys = ''
  let valueBytes = 0
  for (let i = 0; i < count; i++) {
    keys += records[i].key
    valueBytes += records[i].value.length
  }
  // a key's bytes are its characters unless some key is not ASCII
  let keyBytes = Buffer.byteLength(keys)
  const ascii = keyBytes === keys.length
  if (!ascii) {
    // each key on its own: joined, a lone surrogate could pair with the next key's first unit
    keyBytes = 0
    for (let i = 0; i < count; i++) keyBytes += Buffer.byteLength(records[i].key)
  }
  return { records, bytes: segmentOverhead(count) + keyBytes + valueBytes, asciiKeys: ascii ? keys : null }
}

/** Writes the planned segment into `buf` at `at` (`plan.bytes` of room). */
export function writeSegmentV2(plan: SegmentPlan, buf: Buffer, at: number): void {
  const { records, asciiKeys } = plan
  const count = records.length
  // DataView's setters cost a tenth of Buffer's writeDoubleBE / writeUInt32BE here
  const view = new DataView(buf.buffer, buf.byteOffset, buf.length)
  buf[at] = VERSION
  view.setUint32(at + 1, count)
  let pos = at + HEADER
  for (let i = 0; i < count; i++) {
    const { key, value, timestamp } = records[i]
    view.setFloat64(pos, timestamp)
    view.setUint32(pos + 8, asciiKeys !== null ? key.length : Buffer.byteLength(key))
    view.setUint32(pos + 12, value.length)
    pos += ENTRY
  }
  if (asciiKeys !== null) pos += buf.write(asciiKeys, pos, 'latin1')
  else for (let i = 0; i < count; i++) pos += buf.write(records[i].key, pos, 'utf8')
  for (let i = 0; i < count; i++) {
    const { value } = records[i]
    buf.set(value, pos)
    pos += value.length
  }
  if (pos !== at + plan.bytes) throw new Error(`segment size mismatch: wrote ${pos - at} of ${plan.bytes} bytes`)
}

/**
 * @example
 * const value = encodeSegmentV2([{ key: 'site:session', value: Buffer.from('{}'), timestamp: Date.now() }])
 */
export function encodeSegmentV2(records: readonly StoredRecord[]): Buffer {
  const plan = planSegmentV2(records)
  const buf = Buffer.allocUnsafe(plan.bytes)
  writeSegmentV2(plan, buf, 0)
  return buf
}

function checkVersion(buf: Buffer): void {
  if (buf[0] !== VERSION) throw new Error(`unknown log segment version ${buf[0]}`)
}

/** Records in a stored value (1 for a version 1 record). */
export function segmentCount(buf: Buffer): number {
  if (buf[0] === RECORD_V1) return 1
  checkVersion(buf)
  return buf.readUInt32BE(1)
}

/**
 * Up to `take` records from the `skip`-th on, appended to `out` as log records of `partition`, the
 * first at `offset`. Values are views into `buf`, not copies.
 * @example
 * readSegment(value, 1, 1, partition, segmentStart + 1, records) // the second record
 */
export function readSegment(buf: Buffer, skip: number, take: number, partition: number, offset: number, out: LogRecord[]): void {
  if (buf[0] === RECORD_V1) {
    if (skip === 0 && take > 0) out.push({ ...decodeRecordV1(buf), partition, offset })
    return
  }
  checkVersion(buf)
  const count = buf.readUInt32BE(1)
  const end = Math.min(count, skip + take)
  let keyAt = segmentOverhead(count)
  let valueAt = keyAt
  for (let i = 0; i < count; i++) valueAt += buf.readUInt32BE(HEADER + i * ENTRY + 8)
  for (let i = 0, entry = HEADER; i < end; i++, entry += ENTRY) {
    const keyLen = buf.readUInt32BE(entry + 8)
    const valueLen = buf.readUInt32BE(entry + 12)
    if (i >= skip) {
      out.push({
        key: buf.toString('utf8', keyAt, keyAt + keyLen),
        value: buf.subarray(valueAt, valueAt + valueLen),
        timestamp: buf.readDoubleBE(entry),
        partition,
        offset: offset++,
      })
    }
    keyAt += keyLen
    valueAt += valueLen
  }
}

/** Every record's timestamp, in order, without decoding keys or values. */
export function segmentTimestamps(buf: Buffer): number[] {
  if (buf[0] === RECORD_V1) return [recordTimestamp(buf)]
  checkVersion(buf)
  const count = buf.readUInt32BE(1)
  const out = new Array<number>(count)
  for (let i = 0; i < count; i++) out[i] = buf.readDoubleBE(HEADER + i * ENTRY)
  return out
}
