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

t.test('the 11th failed login inside a minute is blocked, per email regardless of case', async (t) => {
  const l = new LoginLimiter(10, 60_000)
  for (let i = 0; i < 10; i++) {
    t.notOk(l.blocked('A@x.io', 1000 + i))
    l.fail('a@X.io', 1000 + i)
  }
  t.ok(l.blocked('a@x.io', 2000))
  t.notOk(l.blocked('b@x.io', 2000), 'other emails unaffected')
  t.notOk(l.blocked('a@x.io', 1000 + 60_010), 'a minute later the window has passed')
})

t.test('cookie parsing', async (t) => {
  t.equal(cookieValue('a=1; goalpost_session=xyz; b=2', 'goalpost_session'), 'xyz')
  t.equal(cookieValue('goalpost_sessionx=1', 'goalpost_session'), undefined)
  t.equal(cookieValue(undefined, 'goalpost_session'), undefined)
})
