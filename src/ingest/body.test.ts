import t from 'tap'
import { BATCH_LIMIT_BYTES, BODY_LIMIT_BYTES, parseJsonBody } from './body.js'

const json = Buffer.from('{"type":"pageview","n":1}')

t.test('accepts JSON, plain text and a missing Content-Type', async (t) => {
  for (const ct of [
    'application/json',
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/json; charset=utf-8',
    'Application/JSON',
    undefined,
    '',
  ]) {
    t.same(parseJsonBody(json, ct), { ok: true, value: { type: 'pageview', n: 1 } }, String(ct))
  }
})

t.test('refuses other media types naming Content-Type', async (t) => {
  for (const ct of ['text/html', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
    const r = parseJsonBody(json, ct)
    t.equal(r.ok, false, ct)
    if (!r.ok) t.match(r.error, /^Content-Type /, ct)
  }
})

t.test('invalid JSON', async (t) => {
  for (const text of ['', '{', '{"a":1', 'nope', "{'a':1}", '{"a":1}x']) {
    t.same(parseJsonBody(Buffer.from(text), 'application/json'), { ok: false, error: 'body is not valid JSON' }, text)
  }
})

t.test('any JSON value parses; shape is checked later', async (t) => {
  t.same(parseJsonBody(Buffer.from('[1,2]'), undefined), { ok: true, value: [1, 2] })
  t.same(parseJsonBody(Buffer.from('null'), undefined), { ok: true, value: null })
})

t.test('UTF-8 text and a byte order mark', async (t) => {
  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"title":"Grüße 😀"}')])
  t.same(parseJsonBody(withBom, 'text/plain'), { ok: true, value: { title: 'Grüße 😀' } })
})

t.test('size limits of API.md', async (t) => {
  t.equal(BODY_LIMIT_BYTES, 64 * 1024)
  t.equal(BATCH_LIMIT_BYTES, 1024 * 1024)
})
