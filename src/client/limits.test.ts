import t from 'tap'
import { LIMITS } from '../schema/index.js'
import { cut, cutBytes, MAX, properties, revenue } from './limits.js'

t.test('the client cuts to the limits the server enforces', async (t) => {
  t.equal(MAX.string, LIMITS.string)
  t.equal(MAX.string, LIMITS.eventName)
  t.equal(MAX.string, LIMITS.userId)
  t.equal(MAX.text, LIMITS.text)
  t.equal(MAX.path, LIMITS.path)
  t.equal(MAX.stackBytes, LIMITS.errorStackBytes)
  t.equal(MAX.propertyKeys, LIMITS.propertiesKeys)
  t.equal(MAX.propertiesBytes, LIMITS.propertiesBytes)
})

t.test('cut', async (t) => {
  t.equal(cut('x'.repeat(300)), 'x'.repeat(256))
  t.equal(cut('abc', 2), 'ab')
  t.equal(cut(42), '42', 'numbers become strings')
})

t.test('cutBytes keeps whole characters within the byte budget', async (t) => {
  t.equal(cutBytes('a'.repeat(3000), 2048), 'a'.repeat(2048))
  const euros = cutBytes('€'.repeat(1000), 2048) // 3 bytes each
  t.equal(euros, '€'.repeat(682))
  t.equal(Buffer.byteLength(cutBytes('é'.repeat(2000), 2048)), 2048)
})

t.test('properties keep what the server accepts', async (t) => {
  t.same(properties({ a: 'x', b: 1, c: true, d: null }), { a: 'x', b: 1, c: true, d: null })
  t.same(properties({ a: 'x', o: { nested: 1 }, arr: [1], f: () => 1, u: undefined }), { a: 'x' }, 'objects, arrays, functions and undefined are left out')
  t.equal(properties(undefined), undefined)
  t.equal(properties('text'), undefined)
  t.equal(properties({}), undefined, 'nothing left: no properties at all')
  t.equal(properties({ o: {} }), undefined)
})

t.test('at most 32 keys, keys and strings cut', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))
  const kept = properties(many)!
  t.equal(Object.keys(kept).length, 32)
  t.equal(kept.k31, 31)
  t.notOk('k32' in kept)
  const long = properties({ ['k'.repeat(300)]: 'v'.repeat(3000) })!
  t.same(Object.keys(long), ['k'.repeat(256)])
  t.equal((Object.values(long)[0] as string).length, 2048)
})

t.test('keys are dropped from the end until the whole fits in 4 KiB', async (t) => {
  const big = { a: 'x'.repeat(2000), b: 'y'.repeat(2000), c: 'z'.repeat(2000) }
  const kept = properties(big)!
  t.same(Object.keys(kept), ['a', 'b'])
  t.ok(Buffer.byteLength(JSON.stringify(kept)) <= LIMITS.propertiesBytes)
})

t.test('revenue is sent in the shape the server takes', async (t) => {
  t.same(revenue({ amount: '49.90', currency: 'eur' }), { amount: '49.90', currency: 'EUR' })
  t.same(revenue({ amount: 49.9 * 3, currency: 'USD' }), { amount: 149.7, currency: 'USD' }, 'float noise rounded away')
  t.same(revenue({ amount: 0, currency: 'USD' }), { amount: 0, currency: 'USD' }, 'zero is an amount')
  t.equal(revenue({ amount: 5 }), undefined, 'no currency')
  t.equal(revenue({ currency: 'EUR' }), undefined, 'no amount')
  t.equal(revenue(undefined), undefined)
  t.equal(revenue(null), undefined)
})
