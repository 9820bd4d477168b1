import t from 'tap'
import xxhash from 'xxhash-wasm'
import { hash64, initHash } from './hash.js'

t.test('hash64 refuses to run before initHash', async (t) => {
  t.throws(() => hash64('x'), /before initHash/)
})

t.test('hash64 is xxHash64 split into uint32 halves', async (t) => {
  await initHash()
  await initHash() // a second call is harmless
  const reference = await xxhash()
  for (const s of ['', 'a', 'site\u0000session-1', 'ünïcødé 🎯', 'x'.repeat(300)]) {
    const { hi, lo } = hash64(s)
    t.ok(Number.isInteger(hi) && hi >= 0 && hi <= 0xffffffff, `hi of ${JSON.stringify(s.slice(0, 20))} is a uint32`)
    t.ok(Number.isInteger(lo) && lo >= 0 && lo <= 0xffffffff, 'lo is a uint32')
    const hex = reference.h64ToString(s)
    t.equal(hi, parseInt(hex.slice(0, 8), 16))
    t.equal(lo, parseInt(hex.slice(8), 16))
  }
})

t.test('distinct inputs give distinct hashes', async (t) => {
  await initHash()
  const seen = new Set<string>()
  for (let i = 0; i < 50_000; i++) {
    const { hi, lo } = hash64(`session-${i}`)
    seen.add(`${hi}:${lo}`)
  }
  t.equal(seen.size, 50_000)
})
