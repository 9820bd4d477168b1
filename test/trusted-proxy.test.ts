// GOALPOST_TRUST_PROXY decides whose X-Forwarded-For and X-Forwarded-Proto count; nobody's by
// default. The per-client rate limit keys on the client address, the cookie is Secure over HTTPS.
import t, { type Test } from 'tap'
import { createSite, createUser, pageview, postEvent, setCookieLine, startServer, uid, type Server } from './helpers/index.js'

async function burst(server: Server, site: string, forwardedFor: (i: number) => string): Promise<number[]> {
  const replies = await Promise.all(Array.from({ length: 30 }, (_, i) =>
    postEvent(server, pageview(site, uid('s'), '/'), { 'x-forwarded-for': forwardedFor(i) })))
  return replies.map((r) => r.status)
}

const secureAttribute = async (t: Test, server: Server, proto?: string): Promise<boolean> => {
  const user = await createUser(server, [])
  const reply = await server.request('POST', '/api/login', {
    body: { email: user.email, password: user.password },
    headers: proto ? { 'x-forwarded-proto': proto } : {},
  })
  t.equal(reply.status, 200, `logged in: ${reply.status}`)
  return (setCookieLine(reply, 'goalpost_session') ?? '').split(';').some((a) => a.trim().toLowerCase() === 'secure')
}

t.test('by default X-Forwarded-* count for nothing', async (t) => {
  const server = await startServer({ t, env: { GOALPOST_RATE_LIMIT_CLIENT: '5' } })
  const site = (await createSite(server)).site_id
  const statuses = await burst(server, site, (i) => `198.51.100.${i + 1}`)
  t.ok(statuses.filter((s) => s === 429).length >= 20, `a forged client address per request does not dodge the limit: ${statuses.join(' ')}`)
  t.equal(await secureAttribute(t, server, 'https'), false, 'X-Forwarded-Proto: https from anyone does not make the cookie Secure')
})

t.test('behind a trusted proxy each forwarded client has its own limit, and HTTPS makes the cookie Secure', async (t) => {
  const server = await startServer({ t, env: { GOALPOST_RATE_LIMIT_CLIENT: '5', GOALPOST_TRUST_PROXY: '10.0.0.0/8,127.0.0.1,::1' } })
  const site = (await createSite(server)).site_id
  t.same(await burst(server, site, (i) => `198.51.100.${i + 1}`), Array(30).fill(202), 'thirty clients, one event each')
  const one = await burst(server, site, (i) => `6.6.6.${i}, 198.51.100.200, 10.1.2.3`)
  t.ok(one.filter((s) => s === 429).length >= 20, `one client behind two proxies, whatever it forged to their left: ${one.join(' ')}`)
  t.equal(await secureAttribute(t, server, 'https'), true, 'X-Forwarded-Proto: https from the proxy')
  t.equal(await secureAttribute(t, server, 'http'), false)
  t.equal(await secureAttribute(t, server), false, 'plain HTTP')
})
