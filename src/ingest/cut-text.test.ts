import t from 'tap'
import { cutChars, cutUtf8Bytes } from './cut-text.js'

/** true when the text has no lone surrogate, i.e. survives a UTF-8 round trip unchanged */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s

t.test('cutChars keeps short text and cuts long text', async (t) => {
  t.equal(cutChars('abc', 3), 'abc')
  t.equal(cutChars('abcd', 3), 'abc')
  t.equal(cutChars('', 3), '')
})

t.test('cutChars never splits a surrogate pair', async (t) => {
  const s = 'ab😀c' // 😀 takes indexes 2 and 3
  t.equal(cutChars(s, 3), 'ab')
  t.equal(cutChars(s, 4), 'ab😀')
  t.ok(wellFormed(cutChars('x' + '😀'.repeat(10), 10)))
})

t.test('cutUtf8Bytes counts bytes, ends on a character boundary', async (t) => {
  t.equal(cutUtf8Bytes('abcdef', 4), 'abcd')
  t.equal(cutUtf8Bytes('aé', 2), 'a') // é = 2 bytes
  t.equal(cutUtf8Bytes('aé', 3), 'aé')
  t.equal(cutUtf8Bytes('€€', 5), '€') // € = 3 bytes
  t.equal(cutUtf8Bytes('😀😀', 7), '😀') // 😀 = 4 bytes
  t.equal(cutUtf8Bytes('😀😀', 8), '😀😀')
  t.equal(cutUtf8Bytes('abc', 9), 'abc')
  t.equal(cutUtf8Bytes('abcdef', 6), 'abcdef', 'exactly at the limit')
})

t.test('cutUtf8Bytes on long mixed text stays within the limit and is a prefix', async (t) => {
  const chars = ['a', 'é', '€', '😀']
  for (let n = 0; n < 50; n++) {
    let s = ''
    for (let i = 0; i < 1200; i++) s += chars[(i * 7 + n) % chars.length]
    const cut = cutUtf8Bytes(s, 2048)
    t.ok(Buffer.byteLength(cut) <= 2048)
    t.ok(Buffer.byteLength(cut) > 2048 - 4, 'no more than one character short')
    t.ok(s.startsWith(cut))
    t.ok(wellFormed(cut))
  }
})

t.test('a lone surrogate counts as the 3 bytes it is encoded as', async (t) => {
  const s = 'a\ud800b'
  t.equal(cutUtf8Bytes(s, 4), 'a\ud800')
  t.equal(cutUtf8Bytes(s, 3), 'a')
})
