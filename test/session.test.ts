// POST /api/session — the admin token traded once for the session cookie — and GET /api/session,
// which tells the dashboard who its HttpOnly cookie belongs to.
import t from 'tap'
import { cookiePair, createSite, createUser, isError, login, makeDataDir, namesField, setCookieLine, startServer, uid, userWithKey } from './helpers/index.js'

// clients behind a proxy on this host: their X-Forwarded-For names them (GOALPOST_TRUST_PROXY)
const server = await startServer({ t, env: { GOALPOST_TRUST_PROXY: '127.0.0.1' } })
const exchange = (token: unknown, headers: Record<string, string> = {}) => server.request('POST', '/api/session', { body: { admin_token: token }, headers })

t.test('the admin token is exchanged for an HttpOnly session cookie that acts as the admin', async (t) => {
  const reply = await exchange(server.adminToken)
  t.equal(reply.status, 200, reply.text)
  t.same(reply.json, { admin: true, user: null })
  const line = setCookieLine(reply, 'goalpost_session') ?? ''
  const attrs = line.split(';').slice(1).map((a) => a.trim().toLowerCase())
  t.ok(attrs.includes('httponly'), `HttpOnly (${line})`)
  t.ok(attrs.includes('samesite=lax'), 'SameSite=Lax')
  t.ok(attrs.includes(`max-age=${30 * 86400}`), '30 days')
  t.notMatch(line, server.adminToken!, 'the cookie does not carry the token')
  t.notMatch(reply.text, server.adminToken!, 'nor does the body')

  const cookie = cookiePair(reply, 'goalpost_session')!
  t.same((await server.request('GET', '/api/session', { cookie })).json, { admin: true, user: null }, 'GET /api/session: the admin')
  const site = uid('site')
  const created = await server.request('POST', '/api/sites', { cookie, body: { site_id: site }, headers: { origin: server.url } })
  t.equal(created.status, 201, 'the cookie may do what the admin may')
  isError(t, await server.request('POST', '/api/sites', { cookie, body: { site_id: uid('x') }, headers: { origin: 'https://evil.example' } }), 403, /evil\.example/, 'an admin cookie is refused from another origin')

  t.equal((await server.request('POST', '/api/logout', { cookie })).status, 204)
  isError(t, await server.request('GET', '/api/session', { cookie }), 401, 'authentication required', 'logged out')
})

t.test('wrong, missing or malformed tokens', async (t) => {
  isError(t, await exchange('not-the-token'), 401, 'admin_token is not the admin token')
  namesField(t, await exchange(undefined), 'admin_token')
  namesField(t, await exchange(''), 'admin_token')
  namesField(t, await exchange(42), 'admin_token')
  const apiKey = (await userWithKey(server, [])).key
  isError(t, await exchange(apiKey), 401, undefined, 'an API key is not the admin token')
})

t.test('more than 10 wrong tokens a minute from one address are refused with 429', async (t) => {
  const from = { 'x-forwarded-for': `10.9.${Math.floor(Math.random() * 250)}.7` }
  for (let i = 0; i < 10; i++) t.equal((await exchange(`wrong-${i}`, from)).status, 401)
  const blocked = await exchange(server.adminToken, from)
  isError(t, blocked, 429, /admin token/, 'even the right token, while blocked')
  t.equal(blocked.headers.get('retry-after'), '60')
  t.equal((await exchange(server.adminToken, { 'x-forwarded-for': '10.8.0.1' })).status, 200, 'other addresses are not affected')
})

t.test('GET /api/session names the user behind a cookie or key; 401 without one', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const cookie = await login(server, user.email, user.password)
  const byCookie = await server.request('GET', '/api/session', { cookie })
  t.equal(byCookie.status, 200)
  t.same(byCookie.json, { admin: false, user: { id: user.id, email: user.email, sites: [site] } })
  const keyed = await userWithKey(server, [site])
  t.same((await server.request('GET', '/api/session', { token: keyed.key })).json?.user?.id, keyed.id, 'by API key')
  t.same((await server.request('GET', '/api/session', { token: server.adminToken })).json, { admin: true, user: null }, 'by admin token')
  isError(t, await server.request('GET', '/api/session'), 401, 'authentication required')
})

t.test('a new admin token ends the admin logins made with the old one', async (t) => {
  const dataDir = await makeDataDir(t)
  const first = await startServer({ dataDir, env: { GOALPOST_ADMIN_TOKEN: 'first-token-0123456789' } })
  const cookie = cookiePair(await first.request('POST', '/api/session', { body: { admin_token: 'first-token-0123456789' } }), 'goalpost_session')!
  t.equal((await first.request('GET', '/api/session', { cookie })).status, 200)
  await first.stop()
  const second = await startServer({ dataDir, env: { GOALPOST_ADMIN_TOKEN: 'second-token-0123456789' }, t })
  isError(t, await second.request('GET', '/api/session', { cookie }), 401, 'authentication required', 'the old admin login no longer works')
})
