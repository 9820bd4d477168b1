// docs/api.md §1 — POST /api/events, batches: credentials, limits, all or nothing.
import t from 'tap'
import {
  UA, createGoal, createSite, customEvent, goalIn, hasCors, isError, namesField, pageview, settledGoals, startServer,
  uid, userWithKey, type EventBody,
} from './helpers/index.js'

const server = await startServer({ t })
const siteA = (await createSite(server)).site_id
const siteB = (await createSite(server)).site_id
const userA = await userWithKey(server, [siteA])
const batch = (siteId: string, n: number): EventBody[] => Array.from({ length: n }, () => pageview(siteId, uid('s'), '/b'))
const postBatch = (body: unknown, token?: string) => server.request('POST', '/api/events', { body, token })

t.test('a batch with the admin token or a key of the site is acknowledged with the count', async (t) => {
  const admin = await postBatch(batch(siteA, 3), server.adminToken)
  t.equal(admin.status, 202, admin.text)
  t.same(admin.json, { status: 'ok', accepted: 3 })
  hasCors(t, admin)
  const key = await postBatch(batch(siteA, 2), userA.key)
  t.equal(key.status, 202, key.text)
  t.same(key.json, { status: 'ok', accepted: 2 })
})

t.test('no or an invalid credential: 401 authentication required', async (t) => {
  for (const [label, token] of [['none', undefined], ['invalid', 'not-a-real-key'], ['empty', '']] as const) {
    const reply = await postBatch(batch(siteA, 1), token)
    isError(t, reply, 401, 'authentication required', label)
    hasCors(t, reply)
  }
  isError(t, await server.request('POST', '/api/events', { body: batch(siteA, 1), headers: { authorization: server.adminToken ?? '' } }), 401, 'authentication required', 'token without Bearer')
  isError(t, await postBatch([]), 401, 'authentication required', '401 comes before the 400 of an empty batch')
})

t.test('a key lacking a site of the batch: 403 no access to site <id>', async (t) => {
  isError(t, await postBatch(batch(siteB, 2), userA.key), 403, `no access to site ${siteB}`, 'only site B')
  isError(t, await postBatch([...batch(siteA, 2), ...batch(siteB, 1)], userA.key), 403, `no access to site ${siteB}`, 'A and B mixed')
  const ghost = uid('ghost')
  isError(t, await postBatch(batch(ghost, 1), userA.key), 403, `no access to site ${ghost}`, 'a site that does not exist')
})

t.test('an empty batch or a body that is not an array is refused with 400', async (t) => {
  for (const body of ['[]', '{}', JSON.stringify(pageview(siteA, uid('s'), '/')), 'not json', '"x"', 'null']) {
    const reply = await postBatch(body, server.adminToken)
    isError(t, reply, 400, undefined, body.slice(0, 30))
    hasCors(t, reply)
  }
})

t.test('1000 events are accepted; 1001 are refused with 413', async (t) => {
  const ok = await postBatch(batch(siteA, 1000), server.adminToken)
  t.equal(ok.status, 202, ok.text.slice(0, 300))
  t.same(ok.json, { status: 'ok', accepted: 1000 })
  const over = await postBatch(batch(siteA, 1001), server.adminToken)
  isError(t, over, 413, undefined, '1001 events')
  hasCors(t, over)
})

t.test('a batch of exactly 1 MiB is accepted, one byte more is refused with 413', async (t) => {
  const sized = (bytes: number) => {
    const events = Array.from({ length: 20 }, () => ({ ...pageview(siteA, uid('s'), '/big'), title: '' }))
    let pad = bytes - Buffer.byteLength(JSON.stringify(events))
    for (const e of events) {
      const n = Math.min(pad, 60_000)
      e.title = 't'.repeat(n)
      pad -= n
    }
    return JSON.stringify(events)
  }
  const exact = sized(1024 * 1024)
  t.equal(Buffer.byteLength(exact), 1024 * 1024)
  const ok = await postBatch(exact, server.adminToken)
  t.equal(ok.status, 202, ok.text.slice(0, 300))
  t.same(ok.json, { status: 'ok', accepted: 20 })
  isError(t, await postBatch(sized(1024 * 1024 + 1), server.adminToken), 413, undefined, '1 MiB + 1')
})

t.test('all or nothing: every bad index is listed and nothing is stored', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/ok' })
  const good = [pageview(site, uid('g'), '/ok'), pageview(site, uid('g'), '/ok'), customEvent(site, uid('g'), 'fine')]
  const events: EventBody[] = [
    good[0],
    { type: 'pageview', site_id: site },
    good[1],
    { ...pageview(site, uid('b'), '/ok'), type: 'teleport' },
    good[2],
    { type: 'custom_event', site_id: site, session_id: uid('b') },
    { ...pageview(site, uid('b'), '/ok'), visitor_id: 'bad id' },
  ]
  const reply = await postBatch(events, server.adminToken)
  namesField(t, reply, 'session_id', 400, 'the summary names the first problem')
  hasCors(t, reply)
  const errors: { index: number; error: string }[] = Array.isArray(reply.json?.errors) ? reply.json.errors : []
  t.same(errors.map((e) => e.index).sort((a, b) => a - b), [1, 3, 5, 6], 'every bad index, and only those')
  const byIndex = new Map(errors.map((e) => [e.index, e.error]))
  t.match(byIndex.get(1), /session_id/, 'index 1 names session_id')
  t.match(byIndex.get(3), /type/, 'index 3 names type')
  t.match(byIndex.get(5), /event_name/, 'index 5 names event_name')
  t.match(byIndex.get(6), /visitor_id/, 'index 6 names visitor_id')
  const before = await settledGoals(server, site, 2)
  t.equal(before.total_sessions, 0, 'nothing from the refused batch was stored')
  t.equal(goalIn(before, goal.id)?.conversions, 0)
  const again = await postBatch(good, server.adminToken)
  t.same(again.json, { status: 'ok', accepted: 3 }, 'the good events alone are accepted')
  const after = await settledGoals(server, site, 2, (a) => a.total_sessions >= 3)
  t.equal(after.total_sessions, 3)
  t.equal(goalIn(after, goal.id)?.conversions, 2)
})

t.test('a batch refused for one event of another site stores nothing either', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await userWithKey(server, [site])
  isError(t, await postBatch([pageview(site, uid('s'), '/'), pageview(siteB, uid('s'), '/')], user.key), 403, `no access to site ${siteB}`)
  const answer = await settledGoals(server, site, 2)
  t.equal(answer.total_sessions, 0)
})

t.test('accepted counts bot events, which are not counted as sessions', async (t) => {
  const site = (await createSite(server)).site_id
  const events = [
    pageview(site, uid('h'), '/'),
    pageview(site, uid('bot'), '/', { user_agent: UA.googlebot }),
    pageview(site, uid('h'), '/'),
    customEvent(site, uid('bot'), 'x', { user_agent: UA.googlebot }),
  ]
  const reply = await postBatch(events, server.adminToken)
  t.same(reply.json, { status: 'ok', accepted: 4 })
  const answer = await settledGoals(server, site, 2, (a) => a.total_sessions >= 2)
  t.equal(answer.total_sessions, 2)
})
