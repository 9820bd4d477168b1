import t from 'tap'
import { decodeConfigV1, encodeConfigV1 } from './config-v1.js'
import { configKey, offsetOfRecordKey, parseConfigKey, recordKey, recordPrefix } from './keys.js'
import { decodeRecordV1, encodeRecordV1, recordTimestamp } from './record-v1.js'

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
