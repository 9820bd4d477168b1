/**
 * The committed records of one fetched partition, read straight from Kafka's record batches (magic
 * 2, the only format Kafka 3 and 4 write) with read_committed semantics, one small object per
 * record and nothing else: kafkajs' decoder builds several objects and converts every offset and
 * timestamp through a 64-bit Long string per record, which capped reading at ~20k records/s here.
 *
 *   RecordBatch => base_offset:INT64 batch_length:INT32 partition_leader_epoch:INT32 magic:INT8
 *                  crc:UINT32 attributes:INT16 last_offset_delta:INT32 base_timestamp:INT64
 *                  max_timestamp:INT64 producer_id:INT64 producer_epoch:INT16 base_sequence:INT32
 *                  record_count:INT32 records (compressed as one block when attributes say so)
 *     attributes: bits 0-2 compression codec, bit 3 timestamps are log-append times,
 *                 bit 4 transactional, bit 5 control batch (a transaction marker)
 *   Record => length:VARINT attributes:INT8 timestamp_delta:VARLONG offset_delta:VARINT
 *             key_length:VARINT key value_length:VARINT value header_count:VARINT [headers]
 *     (VARINTs are zigzag-encoded; a length of -1 is null)
 *   Control record key => version:INT16 type:INT16 (0 abort, 1 commit)
 *
 * read_committed as Kafka's own consumer does it (clients/.../CompletedFetch.java): the broker
 * lists the aborted transactions that overlap the fetch (producer id, first offset); once a batch
 * reaches a listed first offset, that producer's transactional batches are aborted until its abort
 * marker. Control batches are never records. CRCs are not checked (kafkajs does not either; TCP's
 * checksums guard the wire).
 */
import type { LogRecord } from '../types.js'
import { codecOf } from './kafkajs-internals.js'
import { type FetchedPartition, int64 } from './fetch-response.js'
import { AbortedTransactions } from './aborted-filter.js'
import { codecName } from './compression.js'
import { UnreadableBatch } from '../errors.js'

/** bytes of a batch before its records */
const BATCH_HEADER = 61
/** base_offset and batch_length: the batch_length counts what follows them */
const LENGTH_PREFIX = 12
const LOG_APPEND_TIME = 0x08
const TRANSACTIONAL = 0x10
const CONTROL = 0x20
const ABORT = 0
const EMPTY = Buffer.alloc(0)

export interface CommittedRecords {
  /** committed records at or after the fetch offset, in offset order */
  records: LogRecord[]
  /** where the next fetch starts: past every whole batch seen, markers and aborted ones included */
  next: number
}

/**
 * A batch that cannot be decoded ends the answer before it, so that the next read starts at it;
 * when it is the first, this rejects with UnreadableBatch, naming `topic`, the partition, the
 * batch's offsets, its codec and the underlying error.
 */
export async function readCommitted(data: FetchedPartition, from: number, topic = '?'): Promise<CommittedRecords> {
  const buf = data.records
  const { partition } = data
  const aborted = new AbortedTransactions(data.aborted)
  const records: LogRecord[] = []
  let next = from
  let at = 0
  while (at + LENGTH_PREFIX <= buf.length) {
    const baseOffset = int64(buf, at)
    const end = at + LENGTH_PREFIX + buf.readInt32BE(at + 8)
    // the last batch may be cut short by the byte limit: the next fetch starts at it
    if (end > buf.length) break
    const unreadable = (cause: unknown, lastOffset = baseOffset, attributes = 0): UnreadableBatch =>
      new UnreadableBatch(topic, partition, baseOffset, lastOffset, codecName(attributes), Buffer.from(buf.subarray(at, end)), cause)
    if (end < at + BATCH_HEADER) throw unreadable(new Error(`the batch is ${end - at} bytes, shorter than its header`))
    const magic = buf.readInt8(at + 16)
    if (magic !== 2) throw unreadable(new Error(`the batch has magic ${magic}; only magic 2 is read`))
    const attributes = buf.readInt16BE(at + 21)
    const lastOffset = baseOffset + buf.readInt32BE(at + 23)
    const producerId = int64(buf, at + 43)
    const control = (attributes & CONTROL) !== 0
    let skip = control
    if (producerId >= 0) {
      aborted.reach(lastOffset)
      if (control) {
        if (markerType(buf, at + BATCH_HEADER) === ABORT) aborted.ended(producerId)
      } else if ((attributes & TRANSACTIONAL) !== 0 && aborted.aborts(producerId)) {
        skip = true
      }
    }
    if (!skip && lastOffset >= from) {
      const count = buf.readInt32BE(at + 57)
      const before = records.length
      try {
        const codec = codecOf(attributes)
        const body = codec === null ? buf : await codec.decompress(buf.subarray(at + BATCH_HEADER, end))
        const start = codec === null ? at + BATCH_HEADER : 0
        const stop = codec === null ? end : body.length
        const appendTime = (attributes & LOG_APPEND_TIME) !== 0 ? int64(buf, at + 35) : -1
        readRecords(body, start, stop, count, partition, baseOffset, int64(buf, at + 27), appendTime, from, records)
      } catch (err) {
        // what came before it is delivered; the next read starts at this batch and names it
        if (next > from) return { records: records.slice(0, before), next }
        throw unreadable(err, lastOffset, attributes)
      }
    }
    next = Math.max(next, lastOffset + 1)
    at = end
  }
  return { records, next }
}

/** the type of a control batch's marker (its first record's key), or -1 */
function markerType(buf: Buffer, at: number): number {
  const r = new Cursor(buf, at)
  r.varint() // length
  r.pos += 1 // attributes
  r.varint() // timestamp delta
  r.varint() // offset delta
  const keyLength = r.varint()
  return keyLength >= 4 ? buf.readInt16BE(r.pos + 2) : -1
}

function readRecords(
  buf: Buffer, start: number, stop: number, count: number, partition: number,
  baseOffset: number, baseTimestamp: number, appendTime: number, from: number, out: LogRecord[],
): void {
  const r = new Cursor(buf, start)
  for (let i = 0; i < count; i++) {
    const length = r.varint()
    const end = r.pos + length
    if (length < 0 || end > stop) throw new Error(`record ${i} of ${count} runs past its batch`)
    r.pos += 1 // attributes
    const timestampDelta = r.varint()
    const offset = baseOffset + r.varint()
    const keyLength = r.varint()
    const keyAt = r.pos
    if (keyLength > 0) r.pos += keyLength
    const valueLength = r.varint()
    const valueAt = r.pos
    r.pos = end // headers: the event log sets none
    if (offset < from) continue
    out.push({
      key: keyLength > 0 ? buf.toString('utf8', keyAt, keyAt + keyLength) : '',
      value: valueLength > 0 ? buf.subarray(valueAt, valueAt + valueLength) : EMPTY,
      timestamp: appendTime >= 0 ? appendTime : baseTimestamp + timestampDelta,
      partition,
      offset,
    })
  }
}

class Cursor {
  constructor(readonly buf: Buffer, public pos: number) {}

  /** a zigzag VARINT or VARLONG, exact below 2^53 */
  varint(): number {
    const buf = this.buf
    let b = buf[this.pos++]
    if (b < 0x80) return (b >>> 1) ^ -(b & 1)
    let value = b & 0x7f
    let scale = 128
    do {
      b = buf[this.pos++]!
      value += (b & 0x7f) * scale
      scale *= 128
    } while (b >= 0x80 && scale <= 2 ** 63)
    return value % 2 === 0 ? value / 2 : -(value + 1) / 2
  }
}
