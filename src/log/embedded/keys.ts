/**
 * Key layout of the embedded log's LevelDB — every key the log writes is built here. Records
 * live in data files (topic-files.ts); LevelDB holds what describes them, plus config.
 *
 * Each key opens with a one-byte space tag, so each keyspace is one contiguous range. Integers
 * are big-endian, so byte order is numeric order; u64 is written as two u32 halves and holds
 * offsets up to 2^53 - 1.
 *
 *   record     0x01 | topicLen:u8 | topic:utf8 | partition:u32 | offset:u64 → record-v1.ts
 *                (no longer written: records a log stored before data files, read until
 *                retention removes them; a segment-v2.ts value reads too)
 *   topic      0x02 | topic:utf8                                           → JSON TopicSpec
 *   log start  0x03 | topicLen:u8 | topic:utf8 | partition:u32             → offset:u64
 *   config     0x04 | kindLen:u8 | kind:utf8 | id:utf8                     → config-v1.ts
 *   config seq 0x05                                                        → seq:u64
 *   probe      0x06                                                        → epoch ms:u64
 *   data file  0x07 | topicLen:u8 | topic:utf8 | fileNo:u64               → ranges (file-index-v1.ts)
 *   file index 0x08 | topicLen:u8 | topic:utf8 | fileNo:u64               → index (file-index-v1.ts)
 *
 * Stored records of one partition are adjacent and ordered by offset: reading them is one range
 * scan (segment-scan.ts) and their end one reverse seek. "log start" is the first retained
 * offset, written with every retention run: a partition that retention emptied still knows
 * where its offsets continue after a restart (Kafka keeps a log-start-offset checkpoint for the
 * same reason), and reading starts there inside the first segment left. "data file" and "file
 * index" describe a sealed data file, so that opening the log does not read every file. "probe"
 * is what the log writes to find out whether the disk takes writes again after a failure
 * (healing-db.ts).
 */

const RECORD = 0x01
const TOPIC = 0x02
const LOG_START = 0x03
const CONFIG = 0x04
const CONFIG_SEQ = 0x05
const PROBE = 0x06
const DATA_FILE = 0x07
const FILE_INDEX = 0x08

const U32 = 2 ** 32


export function writeU64(buf: Buffer, value: number, at: number): void {
  buf.writeUInt32BE(Math.floor(value / U32), at)
  buf.writeUInt32BE(value >>> 0, at + 4)
}

export function readU64(buf: Buffer, at: number): number {
  return buf.readUInt32BE(at) * U32 + buf.readUInt32BE(at + 4)
}

export function encodeU64(value: number): Buffer {
  const buf = Buffer.allocUnsafe(8)
  writeU64(buf, value, 0)
  return buf
}

function taggedName(tag: number, name: string, extra: number): Buffer {
  const len = Buffer.byteLength(name)
  const buf = Buffer.allocUnsafe(2 + len + extra)
  buf[0] = tag
  buf[1] = len
  buf.write(name, 2, 'utf8')
  return buf
}

function topicPartition(tag: number, topic: string, partition: number): Buffer {
  const buf = taggedName(tag, topic, 4)
  buf.writeUInt32BE(partition, buf.length - 4)
  return buf
}

/** The shared head of every record key of one partition; build it once per partition. */
export function recordPrefix(topic: string, partition: number): Buffer {
  return topicPartition(RECORD, topic, partition)
}

export function recordKey(prefix: Buffer, offset: number): Buffer {
  const buf = Buffer.allocUnsafe(prefix.length + 8)
  prefix.copy(buf, 0)
  writeU64(buf, offset, prefix.length)
  return buf
}

export function offsetOfRecordKey(key: Buffer): number {
  return readU64(key, key.length - 8)
}

export function logStartKey(topic: string, partition: number): Buffer {
  return topicPartition(LOG_START, topic, partition)
}

export function topicKey(topic: string): Buffer {
  const buf = Buffer.allocUnsafe(1 + Buffer.byteLength(topic))
  buf[0] = TOPIC
  buf.write(topic, 1, 'utf8')
  return buf
}

export const TOPIC_RANGE = { gte: Buffer.from([TOPIC]), lt: Buffer.from([TOPIC + 1]) }

export function configKey(kind: string, id: string): Buffer {
  const kindKey = taggedName(CONFIG, kind, 0)
  return Buffer.concat([kindKey, Buffer.from(id, 'utf8')])
}

export function parseConfigKey(key: Buffer): { kind: string; id: string } {
  const end = 2 + key[1]
  return { kind: key.toString('utf8', 2, end), id: key.toString('utf8', end) }
}

export const CONFIG_RANGE = { gte: Buffer.from([CONFIG]), lt: Buffer.from([CONFIG + 1]) }

export const CONFIG_SEQ_KEY = Buffer.from([CONFIG_SEQ])

export const PROBE_KEY = Buffer.from([PROBE])

function topicFile(tag: number, topic: string, fileNo: number): Buffer {
  const buf = taggedName(tag, topic, 8)
  writeU64(buf, fileNo, buf.length - 8)
  return buf
}

/** Key of a sealed data file's ranges: the offsets each partition has in it. */
export function dataFileKey(topic: string, fileNo: number): Buffer {
  return topicFile(DATA_FILE, topic, fileNo)
}

/** Key of a sealed data file's index: where each segment lies in it. */
export function fileIndexKey(topic: string, fileNo: number): Buffer {
  return topicFile(FILE_INDEX, topic, fileNo)
}

/** Every data file's offset ranges of `topic`. */
export function dataFileRange(topic: string): { gte: Buffer; lt: Buffer } {
  return { gte: dataFileKey(topic, 0), lt: dataFileKey(topic, Number.MAX_SAFE_INTEGER) }
}

export function fileNoOfKey(key: Buffer): number {
  return readU64(key, key.length - 8)
}
