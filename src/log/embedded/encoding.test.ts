import t from 'tap'
import { decodeConfigV1, encodeConfigV1 } from './config-v1.js'
import { configKey, offsetOfRecordKey, parseConfigKey, recordKey, recordPrefix } from './keys.js'
import { decodeRecordV1, encodeRecordV1, recordTimestamp } from './record-v1.js'
import { decodeIndexV1, decodeRangesV1, encodeIndexV1, encodeRangesV1, rangesOf } from './file-index-v1.js'
import { checkFileHeader, encodeFrame, fileHeader, frameBytes, scanFrame } from './frame-v1.js'
import { SegmentIndex } from './segment-index.js'
import { encodeSegmentV2, planSegmentV2, readSegment, segmentCount, segmentTimestamps } from './segment-v2.js'
import type { LogRecord } from '../types.js'

/** what readSegment appends for a segment that starts at offset 100 of partition 7 */
const read = (buf: Buffer, skip: number, take: number, out: LogRecord[] = []): LogRecord[] => {
  readSegment(buf, skip, take, 7, 100 + skip, out)
  return out
}
/** `records` as log records from the segment's `first`-th on */
const logged = (records: { key: string; value: Buffer; timestamp: number }[], first: number): LogRecord[] =>
  records.map((r, i) => ({ ...r, partition: 7, offset: 100 + first + i }))

t.test('record keys sort by topic and partition, then numerically by offset', async (t) => {
  const offsets = [0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]
  const prefix = recordPrefix('events', 3)
  const keys = offsets.map((o) => recordKey(prefix, o))
  t.same(keys.map(offsetOfRecordKey), offsets, 'offsets read back')
  const sorted = [...keys].sort(Buffer.compare)
  t.same(sorted.map(offsetOfRecordKey), offsets, 'byte order is offset order')
  const next = recordKey(recordPrefix('events', 4), 0)
  t.ok(keys.every((k) => Buffer.compare(k, next) < 0), 'a partition sorts before the next one')
  const other = recordKey(recordPrefix('eventz', 0), 0)
  t.ok(keys.every((k) => !k.subarray(0, prefix.length).equals(other.subarray(0, prefix.length))))
})

t.test('config keys round-trip kind and id', async (t) => {
  for (const [kind, id] of [['site', 'a'], ['goal', 'id:with:colons'], ['ünï', '日本/😀']]) {
    t.same(parseConfigKey(configKey(kind, id)), { kind, id })
  }
  t.not(configKey('ab', 'c').toString('hex'), configKey('a', 'bc').toString('hex'), 'kind and id do not blur')
})

t.test('record-v1 round-trips and exposes the timestamp', async (t) => {
  const record = { key: 'site:sëss', value: Buffer.from([0, 1, 2, 255]), timestamp: 1_767_225_600_123 }
  const encoded = encodeRecordV1(record)
  t.equal(encoded[0], 1, 'version byte')
  t.same(decodeRecordV1(encoded), record)
  t.equal(recordTimestamp(encoded), record.timestamp)
  t.same(decodeRecordV1(encodeRecordV1({ key: '', value: Buffer.alloc(0), timestamp: 0 })).value, Buffer.alloc(0))
  encoded[0] = 9
  t.throws(() => decodeRecordV1(encoded), /version 9/)
})

t.test('config-v1 round-trips seq and value', async (t) => {
  const value = { a: [1, 'two', null], b: { c: true } }
  t.same(decodeConfigV1(encodeConfigV1(2 ** 33 + 5, JSON.stringify(value))), { seq: 2 ** 33 + 5, value })
})

t.test('segment-v2 round-trips records, reads from any record on, and exposes timestamps', async (t) => {
  const records = [
    { key: 'site:sëss', value: Buffer.from([0, 1, 2, 255]), timestamp: 1_767_225_600_123 },
    { key: '', value: Buffer.alloc(0), timestamp: 0 },
    { key: '日本/😀', value: Buffer.from('{"type":"pageview"}'), timestamp: 2 ** 52 },
  ]
  const encoded = encodeSegmentV2(records)
  t.equal(encoded[0], 2, 'version byte')
  t.equal(segmentCount(encoded), 3)
  t.same(read(encoded, 0, 10), logged(records, 0))
  t.same(read(encoded, 1, 1), logged([records[1]], 1), 'skip and take')
  t.same(read(encoded, 2, 5), logged([records[2]], 2))
  t.same(read(encoded, 3, 5), [], 'past the end')
  t.same(read(encoded, 2, 5, read(encoded, 0, 1)), [...logged([records[0]], 0), ...logged([records[2]], 2)], 'appended to what the reader has')
  t.same(segmentTimestamps(encoded), records.map((r) => r.timestamp))
  const ascii = records.map((r, i) => ({ ...r, key: `site-${i}:session` }))
  t.same(read(encodeSegmentV2(ascii), 0, 10), logged(ascii, 0), 'ASCII keys (written in one go)')
  // joined, these two would form one valid pair; each alone is a lone surrogate, stored as U+FFFD
  const split = [{ ...records[0], key: 'a\ud800' }, { ...records[0], key: '\udc00b' }]
  t.same(read(encodeSegmentV2(split), 0, 2).map((r) => r.key), ['a\ufffd', '\ufffdb'], 'each key encodes on its own')
  encoded[0] = 9
  t.throws(() => segmentCount(encoded), /version 9/)
  t.throws(() => read(encoded, 0, 1), /version 9/)
})

t.test('a record-v1 value reads as a segment of one record', async (t) => {
  const record = { key: 'k', value: Buffer.from('v'), timestamp: 42 }
  const v1 = encodeRecordV1(record)
  t.equal(segmentCount(v1), 1)
  t.same(read(v1, 0, 3), logged([record], 0))
  t.same(read(v1, 1, 3), [])
  t.same(read(v1, 0, 0), [])
  t.same(segmentTimestamps(v1), [42])
})

const plan = (first: number, n: number) =>
  planSegmentV2(Array.from({ length: n }, (_, i) => ({ key: `k${first + i}`, value: Buffer.from(`value ${first + i}`), timestamp: first + i })))

t.test('frame-v1: parts round-trip with their file positions; a torn or foreign frame ends the data', async (t) => {
  const parts = [{ partition: 3, first: 2 ** 33, segment: plan(0, 2) }, { partition: 0, first: 7, segment: plan(7, 1) }]
  const at = 1000
  const { frame, stored } = encodeFrame(parts, at)
  t.equal(frame.length, frameBytes(parts))
  const file = Buffer.concat([Buffer.alloc(at), frame, Buffer.alloc(64)])
  const found = scanFrame(file.subarray(at), 0, at, file.length)
  t.same(found, { kind: 'frame', parts: stored, next: frame.length }, 'the scan finds what encoding said')
  t.same(stored.map((p) => [p.partition, p.first, p.count]), [[3, 2 ** 33, 2], [0, 7, 1]])
  t.same(read(file.subarray(stored[1].pos, stored[1].pos + stored[1].len), 0, 5).map((r) => r.key), ['k7'], 'positions are file positions')
  t.same(scanFrame(file, at + frame.length, 0, file.length), { kind: 'end' }, 'zeros end the data')
  t.same(scanFrame(frame.subarray(0, 20), 0, at, file.length), { kind: 'more', bytes: frame.length }, 'a frame past the buffer asks for more')
  t.same(scanFrame(frame.subarray(0, 4), 0, at, file.length), { kind: 'more', bytes: 8 }, 'so does a header past it')
  t.same(scanFrame(frame, 0, at, at + frame.length - 1), { kind: 'end' }, 'a frame running past the file is torn')
  const torn = Buffer.from(frame)
  torn[torn.length - 1] ^= 0xff
  t.same(scanFrame(torn, 0, at, file.length), { kind: 'end' }, 'a frame whose CRC does not match is torn')
  t.throws(() => checkFileHeader(Buffer.from('not a log file!!'), 'x.seg'), /x.seg is not a log data file/)
  const future = fileHeader()
  future.writeUInt32BE(2, 8)
  t.throws(() => checkFileHeader(future, 'y.seg'), /unknown log data file version 2/)
  t.doesNotThrow(() => checkFileHeader(fileHeader(), 'z.seg'))
})

t.test('segment index: finds the segment holding an offset, refuses a gap, takes back a frame', async (t) => {
  const index = new SegmentIndex()
  t.equal(index.find(5), 0, 'empty: nothing to find')
  index.add({ first: 10, count: 5, pos: 100, len: 50 })
  index.add({ first: 15, count: 1, pos: 300, len: 10 })
  index.add({ first: 16, count: 4, pos: 400, len: 40 })
  t.same([index.first, index.end, index.size], [10, 20, 3])
  t.same([0, 9, 10, 14, 15, 16, 19, 20, 99].map((o) => index.find(o)), [0, 0, 0, 0, 1, 2, 2, 3, 3])
  t.throws(() => index.add({ first: 21, count: 1, pos: 500, len: 1 }), /does not continue the partition at 20/)
  index.truncate(1)
  t.same([index.end, index.size], [15, 1])
  index.add({ first: 15, count: 2, pos: 300, len: 20 })
  t.equal(index.end, 17, 'the offsets taken back are taken again')
})

t.test('file-index-v1: ranges and index round-trip', async (t) => {
  const a = new SegmentIndex()
  a.add({ first: 0, count: 3, pos: 16, len: 99 })
  a.add({ first: 3, count: 1, pos: 200, len: 20 })
  const b = new SegmentIndex()
  b.add({ first: 2 ** 40, count: 7, pos: 2 ** 31, len: 2 ** 20 })
  const index = new Map([[0, a], [9, b]])
  t.same(decodeIndexV1(encodeIndexV1(index)), index)
  const ranges = rangesOf(index)
  t.same(ranges, new Map([[0, { first: 0, end: 4 }], [9, { first: 2 ** 40, end: 2 ** 40 + 7 }]]))
  t.same(decodeRangesV1(encodeRangesV1(ranges)), ranges)
  const bad = encodeRangesV1(ranges)
  bad[0] = 3
  t.throws(() => decodeRangesV1(bad), /unknown data file offset ranges version 3/)
})
