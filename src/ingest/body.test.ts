import t from 'tap'
import { BATCH_LIMIT_BYTES, BODY_LIMIT_BYTES, parseJsonBody } from './body.js'

const json = Buffer.from('{"type":"pageview","n":1}')

t.test('JSON text parses; a form body is not JSON', async (t) => {
  t.same(parseJsonBody(json), { ok: true, value: { type: 'pageview', n: 1 } })
  t.same(parseJsonBody(Buffer.from('--x\r\nContent-Disposition: form-data')), { ok: false, error: 'body is not valid JSON' })
})

t.test('invalid JSON', async (t) => {
  for (const text of ['', '{', '{"a":1', 'nope', "{'a':1}", '{"a":1}x']) {
    t.same(parseJsonBody(Buffer.from(text)), { ok: false, error: 'body is not valid JSON' }, text)
  }
})

t.test('any JSON value parses; shape is checked later', async (t) => {
  t.same(parseJsonBody(Buffer.from('[1,2]')), { ok: true, value: [1, 2] })
  t.same(parseJsonBody(Buffer.from('null')), { ok: true, value: null })
})

t.test('UTF-8 text and a byte order mark', async (t) => {
  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"title":"Grüße 😀"}')])
  t.same(parseJsonBody(withBom), { ok: true, value: { title: 'Grüße 😀' } })
})

t.test('size limits of docs/api.md', async (t) => {
  t.equal(BODY_LIMIT_BYTES, 64 * 1024)
  t.equal(BATCH_LIMIT_BYTES, 1024 * 1024)
})
