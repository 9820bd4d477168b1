import t from 'tap'
import { mkdtemp, writeFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { StaticAsset, acceptsGzip } from './static-asset.js'

const JS = 'application/javascript; charset=utf-8'
const text = Buffer.from('console.log("hello, world");\n'.repeat(40))
const asset = new StaticAsset(text, { contentType: JS, maxAge: 600, cors: true })
const get = (headers: Record<string, string> = {}) => asset.answer({ headers })

t.test('answers the bytes with type, strong ETag, lifetime and CORS', async (t) => {
  const r = get()
  t.equal(r.status, 200)
  t.same(r.body, text)
  t.match(r.headers, { 'Content-Type': JS, 'Cache-Control': 'public, max-age=600', 'Access-Control-Allow-Origin': '*', Vary: 'Accept-Encoding' })
  t.match(r.headers?.ETag, /^"[A-Za-z0-9_-]{27}"$/, 'strong: quoted, no W/')
  t.notOk(r.headers?.['Content-Encoding'])
})

t.test('the ETag is a hash of the bytes', async (t) => {
  t.equal(new StaticAsset(Buffer.from(text), { contentType: JS }).etag, asset.etag, 'same bytes, same tag')
  t.not(new StaticAsset(Buffer.from('other'), { contentType: JS }).etag, asset.etag, 'other bytes, other tag')
})

t.test('If-None-Match with the current tag → 304 without a body', async (t) => {
  for (const inm of [asset.etag, `"nope", ${asset.etag}`, `W/${asset.etag}`, '*']) {
    const r = get({ 'if-none-match': inm })
    t.equal(r.status, 304, inm)
    t.equal(r.body, undefined)
    t.equal(r.headers?.ETag, asset.etag)
    t.equal(r.headers?.['Cache-Control'], 'public, max-age=600')
    t.notOk(r.headers?.['Content-Type'], 'no body, no type')
  }
  t.equal(get({ 'if-none-match': '"stale"' }).status, 200, 'another tag gets the bytes')
})

t.test('gzip for clients that accept it, with its own tag', async (t) => {
  const r = get({ 'accept-encoding': 'gzip, deflate, br' })
  t.equal(r.headers?.['Content-Encoding'], 'gzip')
  t.same(gunzipSync(r.body as Buffer), text)
  t.ok((r.body as Buffer).length < text.length)
  t.not(r.headers?.ETag, asset.etag)
  t.equal(get({ 'accept-encoding': 'gzip', 'if-none-match': r.headers!.ETag }).status, 304)
  t.equal(get({ 'if-none-match': r.headers!.ETag }).status, 200, 'the gzip tag does not validate the plain bytes')
})

t.test('a file too small to shrink is never gzipped', async (t) => {
  const tiny = new StaticAsset(Buffer.from('x'), { contentType: JS })
  t.notOk(tiny.answer({ headers: { 'accept-encoding': 'gzip' } }).headers?.['Content-Encoding'])
  t.notOk(tiny.answer({ headers: {} }).headers?.['Access-Control-Allow-Origin'], 'no CORS unless asked')
})

t.test('Accept-Encoding parsing', async (t) => {
  t.ok(acceptsGzip('gzip'))
  t.ok(acceptsGzip('br;q=1.0, gzip;q=0.8'))
  t.ok(acceptsGzip('*'))
  t.ok(acceptsGzip('GZIP'))
  t.notOk(acceptsGzip(undefined))
  t.notOk(acceptsGzip('br, deflate'))
  t.notOk(acceptsGzip('gzip;q=0'))
  t.notOk(acceptsGzip('identity'))
})

t.test('fromFile reads once and names a missing file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-asset-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'a.js')
  await writeFile(file, text)
  const loaded = StaticAsset.fromFile(file, { contentType: JS })
  await writeFile(file, 'changed')
  t.same(loaded.bytes, text, 'later changes to the file are not served')
  t.throws(() => StaticAsset.fromFile(join(dir, 'missing.js'), { contentType: JS }), /missing\.js.*npm run build/)
})
