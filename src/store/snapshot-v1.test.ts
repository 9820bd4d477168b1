import t from 'tap'
import { CompletionTimes, GoalDays } from '../goals/index.js'
import { SessionCounter, TopK, U64Map, hash64, initHash } from '../sketch/index.js'
import {
  SNAPSHOT_VERSION, GoalDayEncoder,
  decodeGoalDay, decodeMultiDay, decodeSessionCounter, decodeTopK,
  encodeGoalDay, encodeMultiDay, encodeSessionCounter, encodeTopK,
} from './snapshot-v1.js'
import { decodeCompletionTimes, encodeCompletionTimes } from './times-v1.js'

await initHash()

function counter(threshold: number, n: number, prefix = 's'): SessionCounter {
  const c = new SessionCounter(threshold)
  for (let i = 0; i < n; i++) {
    const { hi, lo } = hash64(prefix + i)
    c.add(hi, lo)
  }
  return c
}

/** as LevelDB hands values back: a Buffer that is a slice of a larger pool, at an odd offset */
function pooled(bytes: Uint8Array): Buffer {
  const pool = Buffer.alloc(bytes.length + 11)
  pool.set(bytes, 7)
  return pool.subarray(7, 7 + bytes.length)
}

t.test('session counter, exact and HyperLogLog', async (t) => {
  const exact = counter(1000, 300)
  exact.add(0, 0)
  const bytes = encodeSessionCounter(exact)
  t.equal(bytes[0], SNAPSHOT_VERSION, 'version byte first')
  t.equal(bytes.length, 2 + 4 + 1 + 4 + 8 * 301)
  const back = decodeSessionCounter(pooled(bytes))
  t.ok(back.isExact)
  t.equal(back.threshold, 1000)
  t.equal(back.count(), 301)
  t.equal(back.add(0, 0), false, 'the zero hash came back')
  const { hi, lo } = hash64('s17')
  t.equal(back.add(hi, lo), false, 'so did the others')

  const hll = counter(0, 5000)
  const hb = encodeSessionCounter(hll)
  t.equal(hb.length, 2 + 4 + 1 + 1 + 16384)
  const hback = decodeSessionCounter(pooled(hb))
  t.notOk(hback.isExact)
  t.equal(hback.count(), hll.count())
  t.same(hback.registers(), hll.registers())
  t.equal(hback.registers()!.buffer.byteLength, 16384, 'registers are copied out of the pooled buffer')
  t.same(encodeSessionCounter(hback), hb, 'encoding is deterministic')

  const empty = decodeSessionCounter(encodeSessionCounter(new SessionCounter(8192)))
  t.equal(empty.count(), 0)
  t.ok(empty.isExact)
})

t.test('goal day', async (t) => {
  const map = new U64Map()
  for (let i = 1; i <= 2000; i++) map.setMin(i * 31, i, 0xffffffff - i)
  map.setMin(0, 0, 12345)
  const bytes = encodeGoalDay(map)
  t.equal(bytes.length, 2 + 4 + 12 * 2001)
  const back = decodeGoalDay(pooled(bytes))
  t.equal(back.size, 2001)
  t.equal(back.get(0, 0), 12345)
  let bad = 0
  for (let i = 1; i <= 2000; i++) if (back.get(i * 31, i) !== 0xffffffff - i) bad++
  t.equal(bad, 0)
  t.equal(decodeGoalDay(encodeGoalDay(new U64Map())).size, 0)
})

t.test('a goal day encoded in slices is the record encoded at once, of the map as it was when the encoding began', async (t) => {
  const map = new U64Map()
  map.setMin(0, 0, 7) // the key kept outside the table
  for (let i = 1; i <= 50_000; i++) map.setMin(Math.imul(i, 2654435761) >>> 0, i, i % 1000)
  const whole = encodeGoalDay(map)
  const encoder = new GoalDayEncoder(map)
  let steps = 0
  while (!encoder.step(1000)) {
    steps++
    // the fold goes on between slices: new sessions, earlier times, a growing table
    map.setMin(0xffffffff, steps, 1)
    map.setMin(Math.imul(steps, 2654435761) >>> 0, steps, 0)
  }
  t.ok(steps > 10, `${steps} slices`)
  t.ok(map.size > 50_001, 'the map grew meanwhile')
  const sliced = encoder.done()
  t.equal(encoder.size, 50_001)
  t.same(Buffer.from(sliced), Buffer.from(whole), 'the same bytes')
  const back = decodeGoalDay(sliced)
  t.equal(back.size, 50_001)
  t.equal(back.get(0, 0), 7)
  t.equal(back.get(Math.imul(5, 2654435761) >>> 0, 5), 5, 'the value it had when the encoding began')
  t.throws(() => new GoalDayEncoder(map).done(), /before every slot/)
})

t.test('multi-day index, from a GoalDays or from entries', async (t) => {
  const g = new GoalDays()
  const noon = (d: number): number => d * 86_400_000 + 43_200_000
  g.record(1, 2, 3, noon(3))
  g.record(1, 2, -5, noon(-5))
  g.record(1, 2, 9, noon(9))
  g.record(0xffffffff, 0xfffffffe, 4, noon(4))
  g.record(0xffffffff, 0xfffffffe, 5, noon(5))
  g.record(8, 8, 5, noon(5))
  const bytes = encodeMultiDay(g)
  t.equal(bytes[0], SNAPSHOT_VERSION)
  const entries = decodeMultiDay(pooled(bytes))
  t.same(entries.sort((a, b) => a.hi - b.hi), [
    { hi: 1, lo: 2, days: [-5, 3, 9] },
    { hi: 0xffffffff, lo: 0xfffffffe, days: [4, 5] },
  ])
  t.same(encodeMultiDay(entries).length, bytes.length)
  t.same(decodeMultiDay(encodeMultiDay([])), [])

  // a whole GoalDays restored from its day records and its side index answers the same
  const copy = new GoalDays()
  for (const d of g.days()) copy.setDay(d, decodeGoalDay(encodeGoalDay(g.dayMap(d)!)))
  copy.setMultiDay(entries)
  t.equal(copy.conversions(-10, 10), g.conversions(-10, 10))
  t.equal(copy.conversions(-10, 10), 3)
  t.same(copy.candidates(-10, 10, 10), g.candidates(-10, 10, 10))
})

t.test('top-k', async (t) => {
  const k = new TopK(50)
  for (let i = 0; i < 300; i++) k.add(i % 3 === 0 ? '/blog/ünïcødé/😀' : `/p/${i % 70}`, 1 + (i % 2), i)
  const bytes = encodeTopK(k)
  const back = decodeTopK(pooled(bytes))
  t.equal(back.capacity, 50)
  t.same(back.top(50), k.top(50))
  const byValue = (a: { value: string }, b: { value: string }): number => (a.value < b.value ? -1 : 1)
  t.same(back.entries().sort(byValue), k.entries().sort(byValue))
  t.equal(decodeTopK(encodeTopK(new TopK(3))).size, 0)
})

t.test('unknown versions, wrong kinds and damaged records are refused clearly', async (t) => {
  const good = encodeGoalDay(U64Map.fromEntries(new Uint32Array([1, 2, 3])))
  const v2 = good.slice()
  v2[0] = 2
  t.throws(() => decodeGoalDay(v2), /unsupported version 2/)
  t.throws(() => decodeSessionCounter(good), /expected a session counter record, found kind 2 \(goal day\)/)
  t.throws(() => decodeGoalDay(good.subarray(0, good.length - 1)), /truncated/)
  t.throws(() => decodeGoalDay(new Uint8Array([1])), /too short/)
  const trailing = new Uint8Array(good.length + 1)
  trailing.set(good)
  t.throws(() => decodeGoalDay(trailing), /trailing/)
  const huge = good.slice()
  new DataView(huge.buffer).setUint32(2, 0xffffffff, true)
  t.throws(() => decodeGoalDay(huge), /truncated/, 'a corrupt count does not allocate gigabytes')
  const badMode = encodeSessionCounter(new SessionCounter(8192))
  badMode[6] = 9
  t.throws(() => decodeSessionCounter(badMode), /unknown mode 9/)
  const badP = encodeSessionCounter(new SessionCounter(0))
  badP[7] = 12
  t.throws(() => decodeSessionCounter(badP), /precision 12/)
  const topk = encodeTopK(new TopK(2))
  t.throws(() => decodeMultiDay(topk), /expected a multi-day index record, found kind 4 \(top-k\)/)
  const alien = topk.slice()
  alien[1] = 99
  t.throws(() => decodeTopK(alien), /found kind 99 \(unknown\)/)
  t.throws(() => encodeMultiDay([{ hi: 1, lo: 1, days: Array.from({ length: 70_000 }, (_, i) => i) }]), /65535/)
})

t.test('completion times round-trip', async (t) => {
  const times = new CompletionTimes()
  times.add(0xffffffff, 1, 10, 20)
  times.add(0xffffffff, 1, 10, 5)
  times.add(7, 0x80000000, 3, 4)
  const back = decodeCompletionTimes(encodeCompletionTimes(times))
  t.same(back.of(0xffffffff, 1), [5, 10, 20])
  t.same(back.of(7, 0x80000000), [3, 4])
  t.equal(back.size, 2)
  t.throws(() => decodeCompletionTimes(encodeCompletionTimes(times).slice(0, 9)))
})
