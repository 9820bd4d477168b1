import t from 'tap'
import type { Request } from '../http/index.js'
import { etagMatches, serveAsset, staticAsset } from './dashboard-routes.js'
import { gunzipSync } from 'node:zlib'

const get = (headers: Record<string, string> = {}): Request =>
  ({ method: 'GET', path: '/', query: new URLSearchParams(), headers, body: Buffer.alloc(0), ip: '127.0.0.1' })

t.test('If-None-Match: lists, weak tags and *', async (t) => {
  t.ok(etagMatches('"abc"', '"abc"'))
  t.ok(etagMatches('"x", W/"abc"', '"abc"'), 'weak comparison')
  t.ok(etagMatches('*', '"abc"'))
  t.notOk(etagMatches('"abcd"', '"abc"'))
  t.notOk(etagMatches(undefined, '"abc"'))
})

t.test('an asset answers 200 with its tag, then 304 for that tag; gzip has its own tag', async (t) => {
  const asset = staticAsset(Buffer.from('body { color: red }'.repeat(20)), 'text/css', 'no-cache')
  const plain = serveAsset(get(), asset)
  t.equal(plain.status, 200)
  t.equal(String(plain.body), 'body { color: red }'.repeat(20))
  const tag = plain.headers!.ETag!
  t.equal(serveAsset(get({ 'if-none-match': tag }), asset).status, 304)
  t.equal(serveAsset(get({ 'if-none-match': tag }), asset).body, undefined, 'no body with 304')

  const zipped = serveAsset(get({ 'accept-encoding': 'gzip, br' }), asset)
  t.equal(zipped.headers!['Content-Encoding'], 'gzip')
  t.equal(gunzipSync(zipped.body as Buffer).toString(), 'body { color: red }'.repeat(20))
  t.not(zipped.headers!.ETag, tag, 'each encoding has its own tag')
  t.equal(serveAsset(get({ 'accept-encoding': 'gzip', 'if-none-match': zipped.headers!.ETag! }), asset).status, 304)
  t.equal(serveAsset(get({ 'if-none-match': zipped.headers!.ETag! }), asset).status, 200, 'the gzip tag does not validate the plain bytes')
  t.equal(zipped.headers!.Vary, 'Accept-Encoding')
})
