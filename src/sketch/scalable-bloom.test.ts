import t from 'tap'
import { ScalableBloomFilter } from './scalable-bloom.js'
import { hash64, initHash } from './hash.js'

t.before(initHash)

const h = (s: string) => hash64(s)

t.test('grows by layers past its first capacity: nothing added is lost, false positives stay bounded', async (t) => {
  const f = new ScalableBloomFilter(1000)
  const n = 100_000
  for (let i = 0; i < n; i++) {
    const { hi, lo } = h(`in-${i}`)
    f.add(hi, lo)
  }
  t.ok(f.layers >= 6, `${f.layers} layers for 100× the first capacity`)
  t.equal(f.count, n)
  let missed = 0
  for (let i = 0; i < n; i++) {
    const { hi, lo } = h(`in-${i}`)
    if (!f.has(hi, lo)) missed++
  }
  t.equal(missed, 0, 'no false negatives in any layer')
  let positives = 0
  const trials = 200_000
  for (let i = 0; i < trials; i++) {
    const { hi, lo } = h(`out-${i}`)
    if (f.has(hi, lo)) positives++
  }
  t.ok(positives / trials < 0.002, `false-positive rate ${(positives / trials * 100).toFixed(3)} % under 0.2 % over ${f.layers} layers`)
})

t.test('a filter within its first capacity has one layer and finds nothing it was not given', async (t) => {
  const f = new ScalableBloomFilter(10)
  const a = h('a')
  t.notOk(f.has(a.hi, a.lo))
  f.add(a.hi, a.lo)
  t.ok(f.has(a.hi, a.lo))
  t.equal(f.layers, 1)
})

t.test('retired layers forget what only they held; a steady population stops the filter growing', async (t) => {
  let now = 0
  const f = new ScalableBloomFilter(1000, { clock: () => now, maxLayerAge: 1 })
  // day after day a new population of 1000, and each item is added again while it is still needed
  for (let day = 0; day < 60; day++) {
    now = day
    for (let i = 0; i < 1000; i++) {
      const x = h(`d${day}-${i}`)
      f.add(x.hi, x.lo)
    }
    f.retire(day - 3)
  }
  const recent = h('d59-7')
  const old = h('d2-7')
  t.ok(f.has(recent.hi, recent.lo), 'the newest items are held')
  t.notOk(f.has(old.hi, old.lo), 'items of retired layers are forgotten')
  t.ok(f.memoryBytes() < 64 * 1024, `${f.memoryBytes()} bytes for 60 000 items added, about 4000 needed, over ${f.layers} layers`)
  f.retire(Infinity)
  t.equal(f.layers, 1, 'the newest layer is never retired')
})
