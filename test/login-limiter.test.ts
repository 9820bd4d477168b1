// docs/api.md §2: more than 10 failed logins a minute for one e-mail → 429, however the e-mail is
// spelled; and one client address trying account after account is limited too.
import t from 'tap'
import { createUser, isError, startServer, uid, type Reply, type Server } from './helpers/index.js'

/** Per client address, failed logins a minute (auth/login-limiter.ts). */
const PER_ADDRESS = 50

function attempt(server: Server, email: string, password: string, from?: string): Promise<Reply> {
  return server.request('POST', '/api/login', { body: { email, password }, headers: from ? { 'x-forwarded-for': from } : {} })
}

/** Runs the attempts four at a time: each costs a scrypt hash. */
async function attempts(n: number, one: (i: number) => Promise<Reply>): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < n; i += 4) statuses.push(...(await Promise.all(Array.from({ length: Math.min(4, n - i) }, (_, j) => one(i + j).then((r) => r.status)))))
  return statuses
}

// 127.0.0.1 is the proxy: each attempt can come from its own client address
const server = await startServer({ t, env: { GOALPOST_TRUST_PROXY: '127.0.0.1' } })

t.test('after 30 failures for one e-mail, no spelling of it logs in', async (t) => {
  const email = `${uid('lim')}@example.com`
  const user = await createUser(server, [], email)
  const statuses = await attempts(30, (i) => attempt(server, email, 'not the password', `198.51.100.${i + 1}`))
  t.same(statuses, [...Array(10).fill(401), ...Array(20).fill(429)], 'ten failures, then refused, from thirty addresses')
  for (const spelling of [` ${email}`, email.toUpperCase(), email.replace(/^l/, 'L').replace('example.com', 'Example.Com'), `${email} `]) {
    const reply = await attempt(server, spelling, user.password, '203.0.113.77')
    isError(t, reply, 429, /too many failed login attempts for this email/, `the right password as ${JSON.stringify(spelling)}`)
    t.match(reply.headers.get('retry-after') ?? '', /^\d+$/, 'with Retry-After')
  }
})

t.test('one client address trying many accounts is limited; other addresses are not', async (t) => {
  const from = '192.0.2.44'
  const statuses = await attempts(PER_ADDRESS, () => attempt(server, `${uid('guess')}@example.com`, 'password1', from))
  t.same(statuses, Array(PER_ADDRESS).fill(401), `${PER_ADDRESS} failures on as many accounts`)
  const user = await createUser(server, [])
  isError(t, await attempt(server, user.email, user.password, from), 429, /too many failed login attempts for this client address/, 'then even a right password from that address')
  t.equal((await attempt(server, user.email, user.password, '192.0.2.45')).status, 200, 'from another address it logs in')
})

t.test('without GOALPOST_TRUST_PROXY a forged X-Forwarded-For changes nothing', async (t) => {
  const plain = await startServer({ t })
  const statuses = await attempts(PER_ADDRESS, (i) => attempt(plain, `${uid('guess')}@example.com`, 'password1', `203.0.113.${i + 1}`))
  t.same(statuses, Array(PER_ADDRESS).fill(401))
  const user = await createUser(plain, [])
  isError(t, await attempt(plain, user.email, user.password, '198.18.0.1'), 429, /client address/, 'all of them counted against the real peer')
})
