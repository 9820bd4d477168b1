// docs/api.md §5, POST /internal/partials: signed by time and body, refused when unsigned, stale,
// tampered or malformed, and served on a port of its own with GOALPOST_INTERNAL_PORT.
import t from 'tap'
import { freePort, startServer, type Server } from './helpers/index.js'
import { internalKey, signedHeaders } from '../dist/api/internal-signature.js'

const PATH = '/internal/partials'
const body = JSON.stringify({ query: { kind: 'status' }, partitions: [0, 1] })

async function post(server: Server, payload: string, headers: Record<string, string>, port = server.port) {
  const res = await fetch(`http://127.0.0.1:${port}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload })
  return { status: res.status, json: (await res.json().catch(() => null)) as { error?: string; partials?: unknown[] } | null }
}

t.test('signed requests are answered; unsigned, stale, tampered and malformed ones are refused', async (t) => {
  const server = await startServer({ t })
  const key = internalKey(server.adminToken!) as Buffer
  const signed = signedHeaders(key, 'POST', PATH, body)
  const ok = await post(server, body, signed)
  t.equal(ok.status, 200, 'a signed request')
  t.ok(Array.isArray(ok.json?.partials))

  t.equal((await post(server, body, {})).status, 404, 'unsigned: no such route')
  const stale = signedHeaders(key, 'POST', PATH, body, Date.now() - 60_000)
  const replay = await post(server, body, stale)
  t.equal(replay.status, 401, 'a request replayed a minute later')
  t.match(replay.json?.error, /s off this node's clock/)
  const tampered = await post(server, body.replace('[0, 1]', '[0]').replace('[0,1]', '[0]'), signed)
  t.equal(tampered.status, 401, 'a body changed after signing')
  t.match(tampered.json?.error, /signature does not match/)
  const otherKey = internalKey('another-admin-token-0123456789') as Buffer
  t.equal((await post(server, body, signedHeaders(otherKey, 'POST', PATH, body))).status, 401, 'signed with another token')

  const huge = JSON.stringify({ query: { kind: 'sessions', goal_id: 'g', window: { from: 1, to: 2 }, limit: 2 ** 31, cursor_ts: null }, partitions: [0] })
  const bad = await post(server, huge, signedHeaders(key, 'POST', PATH, huge))
  t.equal(bad.status, 400, 'a limit beyond the schema')
  t.match(bad.json?.error, /limit/)
  const junk = '{"query":'
  t.equal((await post(server, junk, signedHeaders(key, 'POST', PATH, junk))).status, 400, 'not JSON')
})

t.test('GOALPOST_INTERNAL_PORT serves the internal route on its own port only', async (t) => {
  const internalPort = await freePort()
  const server = await startServer({ t, env: { GOALPOST_INTERNAL_PORT: String(internalPort) } })
  const key = internalKey(server.adminToken!) as Buffer
  t.equal((await post(server, body, signedHeaders(key, 'POST', PATH, body))).status, 404, 'not on the public port')
  t.equal((await post(server, body, signedHeaders(key, 'POST', PATH, body), internalPort)).status, 200, 'on the internal port')
  t.equal((await server.admin('GET', '/api/sites')).status, 200, 'the public API as before')
})
