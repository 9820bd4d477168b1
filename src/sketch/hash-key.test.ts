import t from 'tap'
import { hashHex, hashHi, hashKey, hashKeyHex, hashLo } from './hash-key.js'

t.test('hash keys and their hex spelling', async (t) => {
  const cases: [number, number, string][] = [
    [0, 0, '0000000000000000'],
    [0xffffffff, 0xffffffff, 'ffffffffffffffff'],
    [-1, 5, 'ffffffff00000005'],
    [0x0123abcd, 0x89ef4567, '0123abcd89ef4567'],
    [0x80000000 | 0, 0x7fffffff, '800000007fffffff'],
  ]
  for (const [hi, lo, hex] of cases) {
    t.equal(hashHex(hi, lo), hex)
    const hk = hashKey(hi, lo)
    t.equal(hk.length, 4)
    t.equal(hashKeyHex(hk), hex)
    t.equal(hashHi(hk), hi | 0)
    t.equal(hashLo(hk), lo | 0)
  }
})
