// docs/api.md §8 — WS /api/live: the GET /api/goals body on connect and on change, at most once a second.
import t from 'tap'
import {
  createGoal, createSite, createUser, getGoals, login, pageview, postEvent, postEvents, sleep, startServer, uid, userWithKey,
} from './helpers/index.js'
import { openLive } from './helpers/live.js'

const server = await startServer({ t })
/** the close code of a refusal: 4000 + the status GET /api/goals would answer */
const CLOSE = { unauthenticated: 4401, badRequest: 4400, forbidden: 4403, notFound: 4404 }

t.test('refusals close the socket with a code and the API\'s reason, in the order of §2', async (t) => {
  const site = (await createSite(server)).site_id
  const other = (await createSite(server)).site_id
  const user = await userWithKey(server, [site])
  const ghost = uid('ghost')
  const cases: [string, Record<string, string | number>, number, string | RegExp][] = [
    ['no credential', { site_id: site }, CLOSE.unauthenticated, 'authentication required'],
    ['a wrong key', { site_id: site, key: 'gpk_wrong' }, CLOSE.unauthenticated, 'authentication required'],
    ['a wrong key and a bad days: 401 first', { site_id: site, key: 'nope', days: 0 }, CLOSE.unauthenticated, 'authentication required'],
    ['no site_id', { key: user.key }, CLOSE.badRequest, /site_id/],
    ['days=0', { site_id: site, key: user.key, days: 0 }, CLOSE.badRequest, /days/],
    ['days=abc', { site_id: site, key: user.key, days: 'abc' }, CLOSE.badRequest, /days/],
    ['days past retention', { site_id: site, key: user.key, days: 91 }, CLOSE.badRequest, /days/],
    ['a bad days before a foreign site: 400 first', { site_id: other, key: user.key, days: -1 }, CLOSE.badRequest, /days/],
    ['a site without access', { site_id: other, key: user.key }, CLOSE.forbidden, `no access to site ${other}`],
    ['an unknown site, as a user', { site_id: ghost, key: user.key }, CLOSE.forbidden, `no access to site ${ghost}`],
    ['an unknown site, as the admin', { site_id: ghost, key: server.adminToken! }, CLOSE.notFound, `site ${ghost} not found`],
  ]
  for (const [label, params, code, reason] of cases) {
    const live = openLive(server, params)
    const closed = await live.closed
    t.equal(closed.code, code, `${label}: close code ${code}`)
    if (typeof reason === 'string') t.equal(closed.reason, reason, `${label}: reason`)
    else t.match(closed.reason, reason, `${label}: reason names the field`)
    t.equal(live.messages.length, 0, `${label}: no body before the close`)
  }
})

t.test('a session cookie works from this server\'s pages and is refused from another origin', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const cookie = await login(server, user.email, user.password)
  const own = openLive(server, { site_id: site }, { cookie, origin: server.url }, t)
  await own.next(() => true)
  t.pass('cookie + own origin: the body arrives')
  const foreign = openLive(server, { site_id: site }, { cookie, origin: 'https://evil.example' })
  const closed = await foreign.closed
  t.equal(closed.code, CLOSE.forbidden, 'cookie + foreign origin: closed')
  t.match(closed.reason, /evil\.example/, 'the reason names the origin')
  const keyed = openLive(server, { site_id: site, key: server.adminToken! }, { origin: 'https://evil.example' }, t)
  await keyed.next(() => true)
  t.pass('a key is not a cookie: another origin may use it')
})

t.test('a plain GET of /api/live answers 426; another method 405', async (t) => {
  const plain = await server.request('GET', '/api/live?site_id=x', { token: server.adminToken })
  t.equal(plain.status, 426, plain.text)
  t.match(plain.json?.error, /WebSocket/)
  t.equal(plain.headers.get('upgrade'), 'websocket')
  t.equal((await server.request('POST', '/api/live', { token: server.adminToken, body: {} })).status, 405)
})

t.test('the body on connect is the GET /api/goals body; an event and a new goal send updates', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/thanks' })
  await postEvents(server, [pageview(site, 'a', '/thanks'), pageview(site, 'b', '/')])
  await server.settle()

  for (const days of [1, 7, 30]) {
    const expected = (await getGoals(server, site, days)).json
    const live = openLive(server, { site_id: site, days, key: server.adminToken! }, {}, t)
    const first = await live.next(() => true)
    t.same(first.body, expected, `days=${days}: the first message is the GET /api/goals body`)
    live.close()
  }
  const defaults = openLive(server, { site_id: site, key: server.adminToken! }, {}, t)
  t.equal((await defaults.next(() => true)).body.days, 30, 'days defaults to 30, as for GET')
  defaults.close()

  const live = openLive(server, { site_id: site, days: 7, key: server.adminToken! }, {}, t)
  const first = await live.next(() => true)
  t.equal(first.body.goals[0].conversions, 1)
  t.equal((await postEvent(server, pageview(site, uid('c'), '/thanks'))).status, 202)
  const update = await live.next((m) => m.body.goals[0]?.conversions === 2, 1)
  t.equal(update.body.total_sessions, 3, 'the update carries the new total too')
  // the server spaces its sends >= 1000 ms apart (live-hub.test.ts checks that on a fake clock); measured here
  // at arrival, so a first message delivered late on a busy machine shortens the gap: the same margin as below
  t.ok(update.at - first.at >= 950, `never sooner than a second after the previous message (${Math.round(update.at - first.at)} ms)`)

  const second = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const withGoal = await live.next((m) => m.body.goals.some((g: { id: string }) => g.id === second.id), 1)
  t.same(withGoal.body.goals.map((g: { id: string }) => g.id), [goal.id, second.id], 'a new goal appears, in creation order')
  t.same(withGoal.body, (await getGoals(server, site, 7)).json, 'and the message equals GET /api/goals again')
})

t.test('a burst of events: at most one message a second, and the last one is current', async (t) => {
  const site = (await createSite(server)).site_id
  await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
  const live = openLive(server, { site_id: site, days: 1, key: server.adminToken! }, {}, t)
  await live.next(() => true)
  const sent = 16
  for (let i = 0; i < sent; i++) {
    t.equal((await postEvent(server, pageview(site, `burst-${i}`, '/buy'))).status, 202)
    // pacing the senders, not waiting for a result: about 3 s of events, several inside every second
    await sleep(200)
  }
  await live.next((m) => m.body.goals[0].conversions === sent, 0, 5000)
  const at = live.messages.map((m) => m.at)
  const gaps = at.slice(1).map((x, i) => x - at[i])
  t.ok(live.messages.length >= 3, `updates kept flowing during the burst (${live.messages.length} messages)`)
  // the server spaces its sends >= 1000 ms apart; the margin covers delivery jitter on a busy machine
  t.ok(gaps.every((g) => g >= 950), `messages at least a second apart (gaps ${gaps.map((g) => Math.round(g)).join(', ')} ms)`)
  t.ok(live.messages.length <= Math.ceil((at.at(-1)! - at[0]) / 1000) + 1, 'no more messages than seconds elapsed')
  const counts = live.messages.map((m) => m.body.goals[0].conversions)
  t.same(counts, [...counts].sort((a, b) => a - b), 'conversions only grow from message to message')
  t.equal(new Set(live.messages.map((m) => m.text)).size, live.messages.length, 'no message repeats the previous body')
})

t.test('access that ends while the socket is open closes it', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await userWithKey(server, [site])
  const byKey = openLive(server, { site_id: site, key: user.key })
  await byKey.next(() => true)
  t.equal((await server.admin('DELETE', `/api/keys?id=${user.keyId}`)).status, 204)
  const revoked = await byKey.closed
  t.equal(revoked.code, CLOSE.unauthenticated, 'a revoked key: 4401')

  const other = await createUser(server, [site])
  const cookie = await login(server, other.email, other.password)
  const byCookie = openLive(server, { site_id: site }, { cookie })
  await byCookie.next(() => true)
  t.equal((await server.admin('PATCH', `/api/users?id=${other.id}`, { sites: [] })).status, 200)
  const lost = await byCookie.closed
  t.equal(lost.code, CLOSE.forbidden, 'access taken away: 4403')
  t.equal(lost.reason, `no access to site ${site}`)

  const third = await createUser(server, [site])
  const thirdCookie = await login(server, third.email, third.password)
  const loggedIn = openLive(server, { site_id: site }, { cookie: thirdCookie })
  await loggedIn.next(() => true)
  t.equal((await server.request('POST', '/api/logout', { cookie: thirdCookie })).status, 204)
  t.equal((await loggedIn.closed).code, CLOSE.unauthenticated, 'logged out: 4401')
})
