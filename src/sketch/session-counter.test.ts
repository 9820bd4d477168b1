import t from 'tap'
import { hash64, initHash, type Hash64 } from './hash.js'
import { HLL_M, hllEstimate, hllRank } from './hll.js'
import { SessionCounter } from './session-counter.js'

const THRESHOLD = 8192

await initHash()

/** 3 standard errors of a p = 14 HyperLogLog */
const BOUND = (3 * 1.04) / Math.sqrt(HLL_M)

const hashes = (prefix: string, n: number): Hash64[] => Array.from({ length: n }, (_, i) => hash64(`${prefix}${i}`))

function fill(c: SessionCounter, prefix: string, n: number, from = 0): SessionCounter {
  for (let i = from; i < from + n; i++) {
    const { hi, lo } = hash64(`${prefix}${i}`)
    c.add(hi, lo)
  }
  return c
}

const relErr = (estimate: number, truth: number): number => Math.abs(estimate - truth) / truth

t.test('exact while at or below the threshold', async (t) => {
  const c = new SessionCounter(THRESHOLD)
  t.equal(c.count(), 0)
  t.ok(c.isExact)
  fill(c, 'a', THRESHOLD)
  t.ok(c.isExact)
  t.equal(c.count(), THRESHOLD)
  fill(c, 'a', 1, THRESHOLD)
  t.notOk(c.isExact, 'one more turns it into a HyperLogLog')
  t.ok(relErr(c.count(), THRESHOLD + 1) < BOUND, `estimate ${c.count()} just above the threshold`)
})

t.test('adds are idempotent and report change', async (t) => {
  for (const threshold of [100, 0]) {
    const c = new SessionCounter(threshold)
    const hs = hashes('idem', 500)
    for (const h of hs) c.add(h.hi, h.lo)
    const before = c.count()
    let changed = 0
    for (const h of hs) if (c.add(h.hi, h.lo)) changed++
    t.equal(changed, 0, `threshold ${threshold}: re-adding changes nothing`)
    t.equal(c.count(), before)
  }
  const exact = new SessionCounter(10)
  t.equal(exact.add(1, 2), true)
  t.equal(exact.add(1, 2), false)
  t.equal(exact.add(0, 0), true, 'the zero hash counts too')
  t.equal(exact.count(), 2)
  t.throws(() => new SessionCounter(-1), RangeError)
  t.throws(() => new SessionCounter(1.5), RangeError)
})

t.test('rank uses the 50 bits after the 14 index bits', async (t) => {
  t.equal(hllRank(0x0002_0000, 0), 1, 'first bit after the index set')
  t.equal(hllRank(0x0000_0001, 0), 18, 'last bit of hi')
  t.equal(hllRank(0, 0x8000_0000), 19, 'first bit of lo')
  t.equal(hllRank(0, 1), 50, 'last bit')
  t.equal(hllRank(0xfffc_0000, 0), 51, 'all rank bits zero')
})

t.test('the estimate stays finite and monotone up to saturated registers', async (t) => {
  const regs = new Uint8Array(HLL_M)
  t.equal(hllEstimate(regs), 0, 'empty')
  regs.fill(40)
  const at40 = hllEstimate(regs)
  t.ok(Math.abs(at40 / (HLL_M * 2 ** 40 * 0.7213) - 1) < 0.05, `all registers at 40: ${at40.toExponential(3)}`)
  let previous = at40
  for (const saturated of [1, 100, 8000, HLL_M - 1]) {
    regs.fill(40)
    regs.fill(51, 0, saturated)
    const e = hllEstimate(regs)
    t.ok(Number.isFinite(e) && e > previous, `${saturated} registers at the maximum rank: ${e.toExponential(3)}`)
    previous = e
  }
  regs.fill(51)
  t.equal(hllEstimate(regs), Infinity, 'every register saturated')
})

for (const n of [1_000, 10_000, 100_000, 1_000_000]) {
  t.test(`HyperLogLog estimate within 3 standard errors at ${n} distinct`, async (t) => {
    const c = fill(new SessionCounter(n <= 10_000 ? 0 : THRESHOLD), `hll${n}-`, n)
    t.notOk(c.isExact)
    const err = relErr(c.count(), n)
    t.ok(err < BOUND, `estimate ${c.count()}, relative error ${(100 * err).toFixed(3)} % < ${(100 * BOUND).toFixed(2)} %`)
  })
}

t.test('the estimator is unbiased across the small and middle range', async (t) => {
  // Averaging independent sketches shrinks the noise, so a biased estimator (e.g. raw HyperLogLog
  // without Ertl's corrections, ~+5 % around 2.5·m) would stand out.
  for (const n of [200, 5_000, 40_000]) {
    const runs = 16
    let sum = 0
    for (let r = 0; r < runs; r++) sum += fill(new SessionCounter(0), `bias${n}-${r}-`, n).count() / n
    const mean = sum / runs - 1
    t.ok(Math.abs(mean) < BOUND / Math.sqrt(runs), `n=${n}: mean relative error ${(100 * mean).toFixed(3)} %`)
  }
})

t.test('mergeFrom is a union', async (t) => {
  // a = 0..5999, b = 4000..9999 → 10000 distinct, 2000 shared
  const exactA = fill(new SessionCounter(20_000), 'm', 6000)
  const exactB = fill(new SessionCounter(20_000), 'm', 6000, 4000)
  const merged = exactA.clone()
  t.equal(merged.mergeFrom(exactB), true)
  t.ok(merged.isExact, 'exact ∪ exact stays exact under the threshold')
  t.equal(merged.count(), 10_000)
  t.equal(exactA.count(), 6000, 'the clone left the original alone')
  t.equal(merged.mergeFrom(exactB), false, 'merging again changes nothing')
  t.equal(merged.mergeFrom(merged), false)

  const small = fill(new SessionCounter(8000), 'm', 6000)
  small.mergeFrom(exactB)
  t.notOk(small.isExact, 'over the threshold it turns into a HyperLogLog')
  t.ok(relErr(small.count(), 10_000) < BOUND)

  const hllA = fill(new SessionCounter(0), 'm', 6000)
  const hllB = fill(new SessionCounter(0), 'm', 6000, 4000)
  const both = hllA.clone()
  both.mergeFrom(hllB)
  t.ok(relErr(both.count(), 10_000) < BOUND, `HLL ∪ HLL ${both.count()}`)
  const direct = fill(new SessionCounter(0), 'm', 10_000)
  t.equal(both.count(), direct.count(), 'register max equals adding everything to one sketch')
  t.equal(both.mergeFrom(hllB), false)

  const mixed = exactA.clone()
  mixed.mergeFrom(hllB)
  t.notOk(mixed.isExact)
  t.equal(mixed.count(), direct.count(), 'exact ∪ HLL')
  const mixed2 = hllB.clone()
  mixed2.mergeFrom(exactA)
  t.equal(mixed2.count(), direct.count(), 'HLL ∪ exact')
})

t.test('union counts without touching its inputs', async (t) => {
  const days = Array.from({ length: 30 }, (_, d) => fill(new SessionCounter(0), 'u', 2000, d * 1000))
  const before = days.map((c) => c.count())
  const truth = 29 * 1000 + 2000
  const merged = days[0].clone()
  for (const c of days.slice(1)) merged.mergeFrom(c)
  const u = SessionCounter.union(days)
  t.equal(u, merged.count(), 'same as merging in place')
  t.ok(relErr(u, truth) < BOUND, `union ${u} of ${truth}`)
  t.same(days.map((c) => c.count()), before, 'inputs unchanged')

  const exact = Array.from({ length: 5 }, (_, d) => fill(new SessionCounter(THRESHOLD), 'e', 100, d * 50))
  t.equal(SessionCounter.union(exact), 300, 'exact inputs, small union: exact')
  t.equal(SessionCounter.union([]), 0)
  t.equal(SessionCounter.union([exact[0]]), 100)

  const big = Array.from({ length: 4 }, (_, d) => fill(new SessionCounter(5000), 'b', 5000, d * 5000))
  t.ok(big.every((c) => c.isExact))
  const bu = SessionCounter.union(big)
  t.ok(relErr(bu, 20_000) < BOUND, `exact inputs whose union passes the threshold: estimate ${bu}`)
  t.ok(big.every((c) => c.isExact && c.count() === 5000), 'inputs unchanged')

  const tiny = Array.from({ length: 3 }, (_, d) => fill(new SessionCounter(10), 't', 5, d))
  t.equal(SessionCounter.union(tiny), 7, 'a small threshold after a large one')

  const mixedIn = [exact[0], days[0]]
  const m = days[0].clone()
  m.mergeFrom(exact[0])
  t.equal(SessionCounter.union(mixedIn), m.count(), 'exact and HLL inputs')
})

t.test('clone is deep, memoryBytes tracks the mode, raw accessors round-trip', async (t) => {
  const c = fill(new SessionCounter(50), 'c', 40)
  t.ok(c.memoryBytes() > 40 * 8 && c.memoryBytes() < HLL_M, `exact: ${c.memoryBytes()} bytes`)
  const d = c.clone()
  fill(d, 'c', 5, 1000)
  t.equal(c.count(), 40)
  t.equal(d.count(), 45)
  t.equal(SessionCounter.fromExact(c.exactEntries()!, 50).count(), 40)
  t.equal(c.registers(), undefined)
  t.ok(SessionCounter.fromExact(c.exactEntries()!, 10).isExact === false, 'fromExact respects the threshold')
  t.throws(() => SessionCounter.fromExact(new Uint32Array(3), 10), RangeError)

  const h = fill(new SessionCounter(0), 'c', 3000)
  t.ok(h.memoryBytes() >= HLL_M)
  t.equal(h.exactEntries(), undefined)
  const back = SessionCounter.fromRegisters(h.registers()!, 0)
  t.equal(back.count(), h.count())
  const hc = h.clone()
  fill(hc, 'other', 3000)
  t.equal(h.count(), back.count(), 'clone does not share registers')
  t.ok(hc.count() > h.count())
  t.throws(() => SessionCounter.fromRegisters(new Uint8Array(10), 0), RangeError)
})

t.test('a packed exact counter counts, unites, encodes and takes changes as before', async (t) => {
  const make = () => {
    const c = new SessionCounter(1000)
    for (let i = 1; i <= 300; i++) c.add(i * 7919, i)
    return c
  }
  const packed = make()
  const table = make()
  packed.pack()
  t.ok(packed.memoryBytes() < table.memoryBytes(), `smaller: ${packed.memoryBytes()} B against ${table.memoryBytes()} B`)
  t.equal(packed.count(), 300)
  t.same([...packed.exactEntries()!].sort(), [...table.exactEntries()!].sort(), 'the same hashes')
  const other = new SessionCounter(1000)
  for (let i = 250; i <= 400; i++) other.add(i * 7919, i)
  t.equal(SessionCounter.union([packed, other]), SessionCounter.union([table, other]), 'unions agree')
  t.notOk(packed.add(7919, 1), 'a held hash changes nothing')
  t.ok(packed.add(1, 1), 'a new hash is added')
  t.ok(packed.remove(7919 * 2, 2), 'and one taken out')
  t.equal(packed.count(), 300)
  t.equal(packed.clone().count(), 300)
})
