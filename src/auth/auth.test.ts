import t from 'tap'
import { hashPassword, verifyPassword, hashToken, sameSecret } from './secrets.js'
import { LoginLimiter } from './login-limiter.js'
import { cookieValue } from './principal.js'

t.test('scrypt passwords verify only the right password and salt every hash', async (t) => {
  const h1 = await hashPassword('correct horse')
  const h2 = await hashPassword('correct horse')
  t.not(h1, h2, 'salted')
  t.ok(await verifyPassword('correct horse', h1))
  t.notOk(await verifyPassword('correct horsE', h1))
  t.notOk(await verifyPassword('x', 'not-a-hash'))
})

t.test('tokens are stored as hashes and compared in constant time', async (t) => {
  t.equal(hashToken('abc').length, 64)
  t.not(hashToken('abc'), hashToken('abd'))
  t.ok(sameSecret('abc', 'abc'))
  t.notOk(sameSecret('abc', 'abcd'))
})

t.test('the 11th failed login inside a minute is blocked, per email however it is spelled', async (t) => {
  const l = new LoginLimiter()
  const spellings = ['lim@example.com', ' lim@example.com', 'Lim@Example.Com', 'LIM@EXAMPLE.COM ']
  for (let i = 0; i < 10; i++) t.equal(l.begin(spellings[i % 4], `10.0.0.${i}`, 1000 + i), null, `attempt ${i + 1} may go`)
  for (const spelling of [...spellings, '\tLIM@example.com  ']) {
    t.equal(l.begin(spelling, '10.9.9.9', 2000), 'email', `blocked as ${JSON.stringify(spelling)}`)
  }
  t.equal(l.begin('other@example.com', '10.9.9.9', 2000), null, 'other emails unaffected')
  t.equal(l.begin('lim@example.com', '10.9.9.9', 1000 + 60_010), null, 'a minute later the window has passed')
})

t.test('attempts count before their password is checked, and a success takes its count back', async (t) => {
  const l = new LoginLimiter({ perEmail: 3, perAddress: 100 })
  const started = [1, 2, 3].map((i) => [i, l.begin('a@x.io', '10.0.0.1', 1000 + i)] as const)
  t.same(started.map(([, b]) => b), [null, null, null])
  t.equal(l.begin('a@x.io', '10.0.0.1', 1005), 'email', 'three in flight fill the limit')
  l.succeed('a@x.io', '10.0.0.1', 1001)
  t.equal(l.begin('a@x.io', '10.0.0.1', 1006), null, 'the right password cleared the account')
})

t.test('one client address trying many accounts is blocked too, and a success does not clear it', async (t) => {
  const l = new LoginLimiter({ perEmail: 10, perAddress: 5 })
  for (let i = 0; i < 5; i++) t.equal(l.begin(`user${i}@example.com`, '192.0.2.7', 1000), null)
  t.equal(l.begin('fresh@example.com', '192.0.2.7', 1001), 'address')
  t.equal(l.begin('fresh@example.com', '192.0.2.8', 1001), null, 'other addresses unaffected')
  l.succeed('fresh@example.com', '192.0.2.8', 1001)
  t.equal(l.begin('user0@example.com', '192.0.2.7', 1002), 'address', 'a success elsewhere clears nothing here')
})

t.test('cookie parsing', async (t) => {
  t.equal(cookieValue('a=1; goalpost_session=xyz; b=2', 'goalpost_session'), 'xyz')
  t.equal(cookieValue('goalpost_sessionx=1', 'goalpost_session'), undefined)
  t.equal(cookieValue('goalpost_session=%E0%A4%A', 'goalpost_session'), undefined, 'malformed percent-encoding is no value')
  t.equal(cookieValue(undefined, 'goalpost_session'), undefined)
})
