import t from 'tap'
import { BloomFilter } from './bloom.js'
import { hash64, initHash } from './hash.js'

t.before(initHash)

t.test('everything added is found; the false-positive rate stays near its design at capacity', async (t) => {
  const n = 100_000
  const f = new BloomFilter(n)
  for (let i = 0; i < n; i++) {
    const h = hash64(`in-${i}`)
    f.add(h.hi, h.lo)
  }
  let missed = 0
  for (let i = 0; i < n; i++) {
    const h = hash64(`in-${i}`)
    if (!f.has(h.hi, h.lo)) missed++
  }
  t.equal(missed, 0, 'no false negatives')
  let positives = 0
  const trials = 100_000
  for (let i = 0; i < trials; i++) {
    const h = hash64(`out-${i}`)
    if (f.has(h.hi, h.lo)) positives++
  }
  t.ok(positives / trials < 0.02, `false-positive rate ${(positives / trials * 100).toFixed(2)} % under 2 %`)
  t.equal(f.count, n)
})

t.test('an empty filter finds nothing', async (t) => {
  const f = new BloomFilter(10)
  const h = hash64('x')
  t.notOk(f.has(h.hi, h.lo))
})
