// docs/api.md §2 — admin token, sites, users, login, API keys and the access matrix.
import t from 'tap'
import {
  cookiePair, createGoal, filesHolding, createSite, createUser, isError, login, namesField, pageview, postEvent, setCookieLine,
  startServer, uid, userWithKey, type Reply,
} from './helpers/index.js'

const server = await startServer({ t })
const AUTH_REQUIRED = 'authentication required'
/** docs/api.md: instants are ISO 8601 UTC */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/
const keysOf = (reply: Reply): { id: string }[] => (Array.isArray(reply.json) ? reply.json : reply.json?.keys ?? [])

t.test('sites: create, conflict, validation, update, listing', async (t) => {
  const id = uid('site')
  const created = await server.admin('POST', '/api/sites', { site_id: id })
  t.equal(created.status, 201, created.text)
  t.equal(created.json?.site_id, id)
  t.equal(created.json?.timezone, 'UTC', 'timezone defaults to UTC')
  t.notOk(created.json?.domain, 'no domain unless given')
  t.match(created.json?.created_at, ISO, 'created_at is ISO 8601')

  isError(t, await server.admin('POST', '/api/sites', { site_id: id }), 409, undefined, 'the same site again')

  const berlin = await server.admin('POST', '/api/sites', { site_id: uid('tz'), domain: 'shop.example', timezone: 'Europe/Berlin' })
  t.equal(berlin.status, 201, berlin.text)
  t.equal(berlin.json?.timezone, 'Europe/Berlin')
  t.equal(berlin.json?.domain, 'shop.example')

  t.equal((await server.admin('POST', '/api/sites', { site_id: 'a'.repeat(60) + uid('').slice(-4) })).status, 201, '64 characters')
  for (const bad of ['', 'has space', 'a/b', 'colon:no', 'a'.repeat(65), 'ümlaut']) {
    namesField(t, await server.admin('POST', '/api/sites', { site_id: bad }), 'site_id', 400, JSON.stringify(bad))
  }
  namesField(t, await server.admin('POST', '/api/sites', {}), 'site_id', 400, 'absent')
  namesField(t, await server.admin('POST', '/api/sites', { site_id: 5 }), 'site_id', 400, 'a number')
  for (const tz of ['Mars/Olympus_Mons', 'utc+2', 'Europe/Berlinn']) {
    namesField(t, await server.admin('POST', '/api/sites', { site_id: uid('tz'), timezone: tz }), 'timezone', 400, tz)
  }

  const patched = await server.admin('PATCH', `/api/sites?site_id=${id}`, { domain: 'example.net', timezone: 'America/New_York' })
  t.equal(patched.status, 200, patched.text)
  t.equal(patched.json?.site_id, id)
  t.equal(patched.json?.domain, 'example.net')
  t.equal(patched.json?.timezone, 'America/New_York')
  namesField(t, await server.admin('PATCH', `/api/sites?site_id=${id}`, { timezone: 'Nowhere/Land' }), 'timezone')
  isError(t, await server.admin('PATCH', `/api/sites?site_id=${uid('ghost')}`, { domain: 'x.example' }), 404, undefined, 'PATCH an unknown site')

  const list = await server.admin('GET', '/api/sites')
  t.equal(list.status, 200)
  const mine = (list.json?.sites ?? []).find((s: { site_id: string }) => s.site_id === id)
  t.same(mine, { site_id: id, domain: 'example.net', timezone: 'America/New_York', created_at: created.json?.created_at }, 'the listing shows the update')
})

t.test('a site domain change applies to the Origin check of ingestion', async (t) => {
  const site = (await createSite(server, { domain: 'old.example' })).site_id
  const send = (origin: string) => postEvent(server, pageview(site, uid('s'), '/'), { origin })
  t.equal((await send('https://old.example')).status, 202)
  t.equal((await server.admin('PATCH', `/api/sites?site_id=${site}`, { domain: 'new.example' })).status, 200)
  t.equal((await send('https://new.example')).status, 202)
  isError(t, await send('https://old.example'), 400, /origin/i)
})

t.test('GET /api/sites lists only the sites the caller can access', async (t) => {
  const [a, b] = [(await createSite(server)).site_id, (await createSite(server)).site_id]
  const user = await userWithKey(server, [a])
  const reply = await server.request('GET', '/api/sites', { token: user.key })
  t.equal(reply.status, 200, reply.text)
  t.same((reply.json?.sites ?? []).map((s: { site_id: string }) => s.site_id), [a])
  const all = (await server.admin('GET', '/api/sites')).json?.sites.map((s: { site_id: string }) => s.site_id)
  t.ok(all.includes(a) && all.includes(b), 'the admin sees every site')
})

t.test('users: create, duplicate email regardless of case, short password, access changes', async (t) => {
  const [a, b] = [(await createSite(server)).site_id, (await createSite(server)).site_id]
  const email = `${uid('Mixed')}@Example.com`
  const created = await server.admin('POST', '/api/users', { email, password: 'eightchr', sites: [a] })
  t.equal(created.status, 201, created.text)
  t.type(created.json?.id, 'string')
  t.equal(String(created.json?.email).toLowerCase(), email.toLowerCase())
  t.same(created.json?.sites, [a])
  t.notMatch(created.text, /eightchr/, 'the password is never echoed')
  t.notOk('password' in (created.json ?? {}) || 'password_hash' in (created.json ?? {}), 'no password field')

  for (const variant of [email, email.toUpperCase(), email.toLowerCase()]) {
    isError(t, await server.admin('POST', '/api/users', { email: variant, password: 'long enough', sites: [] }), 409, undefined, variant)
  }
  namesField(t, await server.admin('POST', '/api/users', { email: `${uid('u')}@example.com`, password: 'seven77', sites: [] }), 'password', 400, '7 characters')
  namesField(t, await server.admin('POST', '/api/users', { password: 'long enough', sites: [] }), 'email', 400, 'no email')
  namesField(t, await server.admin('POST', '/api/users', { email: `${uid('u')}@example.com`, password: 'long enough', sites: 'all' }), 'sites', 400, 'sites not a list')

  const userId = created.json?.id as string
  const { key } = (await server.admin('POST', '/api/keys', { user_id: userId })).json as { key: string }
  const goalsOf = (site: string) => server.request('GET', `/api/goals?site_id=${site}`, { token: key })
  t.equal((await goalsOf(a)).status, 200)
  isError(t, await goalsOf(b), 403, `no access to site ${b}`)
  const patched = await server.admin('PATCH', `/api/users?id=${userId}`, { sites: [b] })
  t.equal(patched.status, 200, patched.text)
  t.same(patched.json?.sites, [b])
  t.equal((await goalsOf(b)).status, 200, 'the key follows its user\'s new access')
  isError(t, await goalsOf(a), 403, `no access to site ${a}`)
})

t.test('login: 200 with a session cookie; wrong credentials 401; logout 204', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const reply = await server.request('POST', '/api/login', { body: { email: user.email, password: user.password } })
  t.equal(reply.status, 200, reply.text)
  t.equal(reply.json?.id, user.id)
  t.equal(String(reply.json?.email).toLowerCase(), user.email.toLowerCase())
  t.same(reply.json?.sites, [site])
  const line = setCookieLine(reply, 'goalpost_session') ?? ''
  t.ok(line, 'sets goalpost_session')
  const attrs = line.split(';').slice(1).map((a) => a.trim().toLowerCase())
  t.ok(attrs.includes('httponly'), `HttpOnly (${line})`)
  t.ok(attrs.includes('samesite=lax'), 'SameSite=Lax')
  t.notOk(attrs.includes('secure'), 'not Secure over plain HTTP')
  const maxAge = attrs.find((a) => a.startsWith('max-age='))
  const expires = attrs.find((a) => a.startsWith('expires='))
  if (maxAge) t.equal(Number(maxAge.slice(8)), 30 * 86400, 'Max-Age is 30 days')
  else t.ok(expires && Math.abs(Date.parse(expires.slice(8)) - Date.now() - 30 * 86_400_000) < 120_000, 'expires in 30 days')

  const cookie = cookiePair(reply, 'goalpost_session') ?? ''
  const sites = await server.request('GET', '/api/sites', { cookie })
  t.equal(sites.status, 200, 'the cookie authenticates')

  isError(t, await server.request('POST', '/api/login', { body: { email: user.email, password: 'wrong password' } }), 401, undefined, 'wrong password')
  isError(t, await server.request('POST', '/api/login', { body: { email: `${uid('nobody')}@example.com`, password: 'whatever1' } }), 401, undefined, 'unknown email')

  const out = await server.request('POST', '/api/logout', { cookie })
  t.equal(out.status, 204)
  t.equal(out.text, '', 'a 204 has no body')
  isError(t, await server.request('GET', '/api/sites', { cookie }), 401, AUTH_REQUIRED, 'the cookie no longer works after logout')
})

t.test('login takes the email regardless of case', async (t) => {
  const user = await createUser(server, [], `${uid('Case')}@Example.com`)
  for (const email of [user.email.toLowerCase(), user.email.toUpperCase()]) {
    const reply = await server.request('POST', '/api/login', { body: { email, password: user.password } })
    t.equal(reply.status, 200, `${email}: ${reply.text}`)
    t.equal(reply.json?.id, user.id)
  }
})

t.test('passwords and API keys are stored hashed, never in clear', async (t) => {
  const password = `pw-${uid('secret')}`
  const user = await createUser(server, [], undefined, password)
  const { key } = await server.admin('POST', '/api/keys', { user_id: user.id }).then((r) => r.json as { key: string })
  t.equal((await server.request('GET', '/api/sites', { token: key })).status, 200, 'the key works')
  t.same(await filesHolding(server.dataDir, password), [], 'the password is nowhere in the data directory')
  t.same(await filesHolding(server.dataDir, key), [], 'the key is nowhere in the data directory')
})

t.test('more than 10 failed logins a minute for one email: 429', async (t) => {
  const user = await createUser(server, [])
  const other = await createUser(server, [])
  const attempt = (email: string) => server.request('POST', '/api/login', { body: { email, password: 'not the password' } })
  for (let i = 1; i <= 10; i++) t.equal((await attempt(user.email)).status, 401, `failed attempt ${i}`)
  isError(t, await attempt(user.email), 429, undefined, 'attempt 11')
  t.equal((await attempt(other.email)).status, 401, 'another email is not limited')
  const ok = await server.request('POST', '/api/login', { body: { email: other.email, password: other.password } })
  t.equal(ok.status, 200)
})

t.test('API keys: created once, listed without secrets, revoked', async (t) => {
  const site = (await createSite(server)).site_id
  const alice = await createUser(server, [site])
  const bob = await createUser(server, [site])
  const cookie = await login(server, alice.email, alice.password)

  const created = await server.request('POST', '/api/keys', { cookie, body: {} })
  t.equal(created.status, 201, created.text)
  t.same(Object.keys(created.json ?? {}).sort(), ['created_at', 'id', 'key', 'user_id'])
  t.equal(created.json?.user_id, alice.id, 'a user creates keys for itself')
  t.match(created.json?.created_at, ISO)
  const { id, key } = created.json as { id: string; key: string }
  t.ok(key.length >= 16, 'the key is long enough to be a secret')

  const listed = await server.request('GET', '/api/keys', { cookie })
  t.equal(listed.status, 200, listed.text)
  t.ok(keysOf(listed).some((k) => k.id === id), 'the key is listed')
  t.notOk(listed.text.includes(key), 'the secret is never listed')

  const bobKey = (await server.admin('POST', '/api/keys', { user_id: bob.id })).json as { id: string; key: string }
  t.notOk(keysOf(listed).some((k) => k.id === bobKey.id), 'another user\'s key is not listed')
  isError(t, await server.request('DELETE', `/api/keys?id=${bobKey.id}`, { cookie }), 404, undefined, 'revoking another user\'s key')
  t.equal((await server.request('GET', '/api/sites', { token: bobKey.key })).status, 200, 'and it still works')

  t.equal((await server.request('GET', `/api/goals?site_id=${site}`, { token: key })).status, 200, 'the key carries its user\'s access')
  const revoked = await server.request('DELETE', `/api/keys?id=${id}`, { cookie })
  t.equal(revoked.status, 204, revoked.text)
  isError(t, await server.request('GET', '/api/sites', { token: key }), 401, AUTH_REQUIRED, 'a revoked key')
  isError(t, await server.request('DELETE', `/api/keys?id=${id}`, { cookie }), 404, undefined, 'revoking twice')
})

t.test('the admin must name a user_id to create a key', async (t) => {
  const user = await createUser(server, [])
  namesField(t, await server.admin('POST', '/api/keys', {}), 'user_id')
  const ok = await server.admin('POST', '/api/keys', { user_id: user.id })
  t.equal(ok.status, 201, ok.text)
  t.equal(ok.json?.user_id, user.id)
})

t.test('admin-only management refuses everyone else with 403', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await userWithKey(server, [site])
  isError(t, await server.request('POST', '/api/sites', { token: user.key, body: { site_id: uid('x') } }), 403)
  isError(t, await server.request('PATCH', `/api/sites?site_id=${site}`, { token: user.key, body: { domain: 'x.example' } }), 403)
  isError(t, await server.request('POST', '/api/users', { token: user.key, body: { email: `${uid('u')}@x.example`, password: 'long enough', sites: [site] } }), 403)
  isError(t, await server.request('PATCH', `/api/users?id=${user.id}`, { token: user.key, body: { sites: [site] } }), 403)
})

t.test('every authenticated endpoint: 401 authentication required without a valid credential', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const routes: [string, string, unknown?][] = [
    ['GET', `/api/goals?site_id=${site}`],
    ['GET', `/api/goals?site_id=${site}&days=abc`],
    ['POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'x' }],
    ['PATCH', `/api/goals?id=${goal.id}`, { name: 'x' }],
    ['DELETE', `/api/goals?id=${goal.id}`],
    ['GET', `/api/goals/sessions?id=${goal.id}`],
    ['GET', `/api/goals/suggestions?site_id=${site}&kind=path`],
    ['GET', '/api/sites'],
    ['POST', '/api/sites', { site_id: uid('x') }],
    ['PATCH', `/api/sites?site_id=${site}`, { domain: 'x.example' }],
    ['POST', '/api/users', { email: 'x@example.com', password: 'long enough', sites: [] }],
    ['PATCH', '/api/users?id=x', { sites: [] }],
    ['GET', '/api/keys'],
    ['POST', '/api/keys', {}],
    ['DELETE', '/api/keys?id=x'],
  ]
  for (const [method, path, body] of routes) {
    isError(t, await server.request(method, path, { body }), 401, AUTH_REQUIRED, `${method} ${path} without credential`)
    isError(t, await server.request(method, path, { body, token: 'bogus' }), 401, AUTH_REQUIRED, `${method} ${path} invalid key`)
    isError(t, await server.request(method, path, { body, cookie: 'goalpost_session=bogus' }), 401, AUTH_REQUIRED, `${method} ${path} invalid cookie`)
  }
  const stillThere = await server.admin('GET', `/api/goals?site_id=${site}`)
  t.equal(stillThere.json?.goals?.length, 1, 'nothing was changed by the refused requests')
})

t.test('order of checks: 401, then 400, then 403/404', async (t) => {
  const [mine, theirs] = [(await createSite(server)).site_id, (await createSite(server)).site_id]
  const user = await userWithKey(server, [mine])
  const ghost = uid('ghost')
  const as = (path: string, token?: string) => server.request('GET', path, { token })

  namesField(t, await as(`/api/goals?site_id=${theirs}&days=abc`, user.key), 'days', 400, '400 before 403')
  namesField(t, await as(`/api/goals?site_id=${ghost}&days=0`, user.key), 'days', 400, '400 before 403 (unknown site)')
  namesField(t, await as('/api/goals', user.key), 'site_id', 400, 'missing site_id')
  namesField(t, await server.request('POST', '/api/goals', { token: user.key, body: { site_id: theirs, goal_type: 'teleport', match_path: '/' } }), 'goal_type', 400, 'POST: 400 before 403')
  namesField(t, await as(`/api/goals/suggestions?site_id=${theirs}&kind=nope`, user.key), 'kind', 400, 'suggestions: 400 before 403')

  isError(t, await as(`/api/goals?site_id=${theirs}`, user.key), 403, `no access to site ${theirs}`, 'an existing site')
  isError(t, await as(`/api/goals?site_id=${ghost}`, user.key), 403, `no access to site ${ghost}`, 'a site that does not exist')
  isError(t, await as(`/api/goals/suggestions?site_id=${theirs}&kind=path`, user.key), 403, `no access to site ${theirs}`)
  isError(t, await server.request('POST', '/api/goals', { token: user.key, body: { site_id: theirs, goal_type: 'pageview', match_path: '/' } }), 403, `no access to site ${theirs}`)
  isError(t, await server.request('POST', '/api/goals', { token: user.key, body: { site_id: ghost, goal_type: 'pageview', match_path: '/' } }), 403, `no access to site ${ghost}`)

  isError(t, await as(`/api/goals?site_id=${ghost}`, server.adminToken), 404, undefined, 'the admin gets 404 for an unknown site')
  isError(t, await server.admin('POST', '/api/goals', { site_id: ghost, goal_type: 'pageview', match_path: '/' }), 404, undefined, 'admin POST for an unknown site')
  isError(t, await as(`/api/goals/suggestions?site_id=${ghost}&kind=path`, server.adminToken), 404, undefined, 'admin suggestions for an unknown site')
  t.equal((await as(`/api/goals?site_id=${mine}`, user.key)).status, 200)
})

t.test('a goal id of a site the caller cannot access answers 404, like an unknown id', async (t) => {
  const [mine, theirs] = [(await createSite(server)).site_id, (await createSite(server)).site_id]
  const user = await userWithKey(server, [mine])
  const foreign = await createGoal(server, { site_id: theirs, goal_type: 'pageview', match_path: '/secret' })
  for (const id of [foreign.id, 'no-such-goal']) {
    isError(t, await server.request('GET', `/api/goals/sessions?id=${id}`, { token: user.key }), 404, undefined, `sessions ${id}`)
    isError(t, await server.request('PATCH', `/api/goals?id=${id}`, { token: user.key, body: { name: 'mine now' } }), 404, undefined, `PATCH ${id}`)
    isError(t, await server.request('DELETE', `/api/goals?id=${id}`, { token: user.key }), 404, undefined, `DELETE ${id}`)
  }
  const still = (await server.admin('GET', `/api/goals?site_id=${theirs}`)).json?.goals ?? []
  t.same(still.map((g: { id: string; name: string }) => [g.id, g.name]), [[foreign.id, 'Visit /secret']], 'the foreign goal is untouched')
})

t.test('a cookie-authenticated POST/PATCH/DELETE from a foreign Origin is refused with 403', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await userWithKey(server, [site])
  const cookie = await login(server, user.email, user.password)
  const foreign = { origin: 'https://evil.example' }
  const own = { origin: server.url }
  const body = (path: string) => ({ site_id: site, goal_type: 'pageview', match_path: path })

  isError(t, await server.request('POST', '/api/goals', { cookie, headers: foreign, body: body('/a') }), 403, undefined, 'POST, foreign Origin')
  const sameOrigin = await server.request('POST', '/api/goals', { cookie, headers: own, body: body('/a') })
  t.equal(sameOrigin.status, 201, `POST, this server's Origin: ${sameOrigin.text}`)
  const noOrigin = await server.request('POST', '/api/goals', { cookie, body: body('/b') })
  t.equal(noOrigin.status, 201, 'POST without Origin')
  const bearer = await server.request('POST', '/api/goals', { token: user.key, headers: foreign, body: body('/c') })
  t.equal(bearer.status, 201, 'a bearer credential is not subject to the Origin check')

  const id = sameOrigin.json?.id as string
  isError(t, await server.request('PATCH', `/api/goals?id=${id}`, { cookie, headers: foreign, body: { name: 'x' } }), 403, undefined, 'PATCH, foreign Origin')
  isError(t, await server.request('DELETE', `/api/goals?id=${id}`, { cookie, headers: foreign }), 403, undefined, 'DELETE, foreign Origin')
  t.equal((await server.request('GET', `/api/goals?site_id=${site}`, { cookie, headers: foreign })).status, 200, 'a GET is not affected')
  t.equal((await server.request('PATCH', `/api/goals?id=${id}`, { cookie, headers: own, body: { name: 'Renamed' } })).status, 200)
  t.equal((await server.request('DELETE', `/api/goals?id=${id}`, { cookie, headers: own })).status, 204)
})

t.test('both a header and a cookie: the header wins', async (t) => {
  const [a, b] = [(await createSite(server)).site_id, (await createSite(server)).site_id]
  const userA = await userWithKey(server, [a])
  const userB = await userWithKey(server, [b])
  const cookieA = await login(server, userA.email, userA.password)
  const goals = (site: string, token: string) => server.request('GET', `/api/goals?site_id=${site}`, { token, cookie: cookieA })
  t.equal((await goals(b, userB.key)).status, 200, 'B\'s key reaches B despite A\'s cookie')
  isError(t, await goals(a, userB.key), 403, `no access to site ${a}`, 'A\'s cookie does not lend its access')
  isError(t, await goals(a, 'bogus'), 401, AUTH_REQUIRED, 'an invalid header is not rescued by a valid cookie')
})

t.test('a malformed session cookie is no credential: 401, never 500', async (t) => {
  for (const cookie of ['goalpost_session=%E0%A4%A', 'goalpost_session=%', 'goalpost_session=%zz; other=1']) {
    const reply = await server.request('GET', '/api/sites', { headers: { cookie } })
    t.equal(reply.status, 401, cookie)
  }
})

t.test('guessing bearer tokens is limited per client address: 429 with Retry-After, before the token is checked', async (t) => {
  const guarded = await startServer({ t })
  const statuses: number[] = []
  for (let i = 0; i < 35; i++) statuses.push((await guarded.request('GET', '/api/sites', { token: `guess-${i}-0123456789abcdef` })).status)
  t.same(statuses.slice(0, 30), Array(30).fill(401), 'the first 30 wrong tokens of a minute are answered 401')
  t.same(statuses.slice(30), Array(5).fill(429), 'then the address is refused')
  const blocked = await guarded.request('GET', '/api/sites', { token: guarded.adminToken })
  t.equal(blocked.status, 429, 'even the right token, which is not looked at')
  t.ok(Number(blocked.headers.get('retry-after')) > 0, 'with Retry-After')
  const batch = await guarded.request('POST', '/api/events', { token: 'guess-batch-0123456789abcdef', body: [] })
  t.equal(batch.status, 429, 'the batch endpoint counts the same way')
  t.equal((await guarded.request('GET', '/api/sites')).status, 401, 'a request without a token is simply unauthenticated')
})
