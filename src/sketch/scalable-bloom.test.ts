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
