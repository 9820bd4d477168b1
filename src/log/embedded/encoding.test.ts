import t from 'tap'
import { decodeConfigV1, encodeConfigV1 } from './config-v1.js'
import { configKey, offsetOfRecordKey, parseConfigKey, recordKey, recordPrefix } from './keys.js'
import { decodeRecordV1, encodeRecordV1, recordTimestamp } from './record-v1.js'
import { decodeSegment, encodeSegmentV2, segmentCount, segmentTimestamps } from './segment-v2.js'

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
  t.same(decodeSegment(encoded, 0, 10), records)
  t.same(decodeSegment(encoded, 1, 1), [records[1]], 'skip and take')
  t.same(decodeSegment(encoded, 2, 5), [records[2]])
  t.same(decodeSegment(encoded, 3, 5), [], 'past the end')
  t.same(segmentTimestamps(encoded), records.map((r) => r.timestamp))
  const ascii = records.map((r, i) => ({ ...r, key: `site-${i}:session` }))
  t.same(decodeSegment(encodeSegmentV2(ascii), 0, 10), ascii, 'ASCII keys (written in one go)')
  // joined, these two would form one valid pair; each alone is a lone surrogate, stored as U+FFFD
  const split = [{ ...records[0], key: 'a\ud800' }, { ...records[0], key: '\udc00b' }]
  t.same(decodeSegment(encodeSegmentV2(split), 0, 2).map((r) => r.key), ['a\ufffd', '\ufffdb'], 'each key encodes on its own')
  encoded[0] = 9
  t.throws(() => segmentCount(encoded), /version 9/)
  t.throws(() => decodeSegment(encoded, 0, 1), /version 9/)
})

t.test('a record-v1 value reads as a segment of one record', async (t) => {
  const record = { key: 'k', value: Buffer.from('v'), timestamp: 42 }
  const v1 = encodeRecordV1(record)
  t.equal(segmentCount(v1), 1)
  t.same(decodeSegment(v1, 0, 3), [record])
  t.same(decodeSegment(v1, 1, 3), [])
  t.same(decodeSegment(v1, 0, 0), [])
  t.same(segmentTimestamps(v1), [42])
})
