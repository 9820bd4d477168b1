import t from 'tap'
import { cutUtf8 } from './socket.js'

t.test('close reasons are cut to the bytes a close frame holds, never inside a character', async (t) => {
  t.equal(cutUtf8('short', 123), 'short')
  t.equal(Buffer.byteLength(cutUtf8('a'.repeat(200), 123)), 123)
  const cut = cutUtf8('é'.repeat(100), 123)
  t.equal(cut, 'é'.repeat(61), '61 two-byte characters fit in 123 bytes')
  t.notMatch(cut, /\uFFFD/, 'no broken character')
})
