/**
 * Record value, version 1 — the LevelDB value under a record key (keys.ts) as the log stored it
 * before segments, one value per record. No longer written, still read: segment-v2.ts treats it
 * as a segment of one record.
 *
 *   version:u8 = 1 | timestamp:f64 (epoch ms) | keyLen:u32 | key:utf8 | value:bytes (to the end)
 *
 * Topic, partition and offset live in the LevelDB key and are not repeated. The timestamp sits at
 * a fixed place so that retention reads it without decoding the rest.
 */

const VERSION = 1
const HEADER = 1 + 8 + 4

export interface StoredRecord {
  key: string
  value: Buffer
  timestamp: number
}

export function encodeRecordV1(record: StoredRecord): Buffer {
  const keyLen = Buffer.byteLength(record.key)
  const buf = Buffer.allocUnsafe(HEADER + keyLen + record.value.length)
  buf[0] = VERSION
  buf.writeDoubleBE(record.timestamp, 1)
  buf.writeUInt32BE(keyLen, 9)
  buf.write(record.key, HEADER, 'utf8')
  record.value.copy(buf, HEADER + keyLen)
  return buf
}

function checkVersion(buf: Buffer): void {
  if (buf[0] !== VERSION) throw new Error(`unknown log record version ${buf[0]}`)
}

export function recordTimestamp(buf: Buffer): number {
  checkVersion(buf)
  return buf.readDoubleBE(1)
}

/** The value is a view into `buf`, not a copy. */
export function decodeRecordV1(buf: Buffer): StoredRecord {
  checkVersion(buf)
  const keyEnd = HEADER + buf.readUInt32BE(9)
  return {
    key: buf.toString('utf8', HEADER, keyEnd),
    value: buf.subarray(keyEnd),
    timestamp: buf.readDoubleBE(1),
  }
}
