// docs/api.md §5/§7 — GET /script.js and /vitals.js: the built browser client, with a JavaScript type,
// a strong ETag and 304, a cache lifetime and CORS, against the real server.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'
import { request } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer } from './helpers/index.js'

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'public')
const server = await startServer({ t })

/** a raw GET: fetch would undo the gzip encoding before the test could see it */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(server.url + path, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject).end()
  })
}

for (const name of ['script.js', 'vitals.js']) {
  t.test(`GET /${name}`, async (t) => {
    const built = await readFile(join(PUBLIC, name))
    const r = await get(`/${name}`)
    t.equal(r.status, 200)
    t.equal(r.headers['content-type'], 'application/javascript; charset=utf-8')
    t.equal(r.headers['cache-control'], 'public, max-age=3600')
    t.equal(r.headers['access-control-allow-origin'], '*')
    t.match(r.headers.etag, /^"[^"]+"$/, 'a strong ETag')
    t.same(r.body, built, 'the bytes the build wrote')

    const again = await get(`/${name}`, { 'if-none-match': r.headers.etag as string })
    t.equal(again.status, 304)
    t.equal(again.body.length, 0)
    t.equal(again.headers.etag, r.headers.etag)
    t.equal((await get(`/${name}`, { 'if-none-match': '"old"' })).status, 200, 'a stale tag gets the bytes')

    const zipped = await get(`/${name}`, { 'accept-encoding': 'gzip, br' })
    t.equal(zipped.headers['content-encoding'], 'gzip')
    t.same(gunzipSync(zipped.body), built)
    t.not(zipped.headers.etag, r.headers.etag, 'each encoding has its own tag')
  })
}

t.test('the core is within its budget as served', async (t) => {
  const zipped = await get('/script.js', { 'accept-encoding': 'gzip' })
  t.ok(zipped.body.length <= 3072, `${zipped.body.length} bytes gzipped`)
})

t.test('only GET', async (t) => {
  const r = await server.request('POST', '/script.js', { body: {} })
  t.equal(r.status, 405)
})
