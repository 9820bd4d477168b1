// docs/api.md §3 — GET /api/goals/sessions: the converted sessions of a goal, their summaries, order and paging.
import t from 'tap'
import {
  UA, allSessions, createGoal, createSite, customEvent, daysAgo, getGoals, goalIn, isError, namesField, pageview,
  postEvents, sessionsPage, settledGoals, startServer, uid, type EventBody, type GoalsAnswer, type SessionRow,
} from './helpers/index.js'

const server = await startServer({ t })
const MIN = 60_000
const at = (ms: number) => new Date(ms).toISOString()
const t0 = Math.floor((Date.now() - 40 * MIN) / 1000) * 1000
const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : NaN)
const newestFirst = (a: { ts: number; id: string }, b: { ts: number; id: string }) => b.ts - a.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Waits until the goal shows `n` conversions over `days`, after the freshness bound. */
async function converted(siteId: string, goalId: string, n: number, days = 7): Promise<GoalsAnswer> {
  return settledGoals(server, siteId, days, (a) => (goalIn(a, goalId)?.conversions ?? 0) >= n)
}

t.test('a session summary: pages, referrer, device, browser, os, duration, start and completion', async (t) => {
  const site = (await createSite(server)).site_id
  const signup = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const thanks = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/thanks' })
  const s = uid('full')
  const common = { visitor_id: 'v-full', user_agent: UA.chromeLinux, screen: { width: 1920, height: 1080 } }
  const events: EventBody[] = [
    customEvent(site, s, 'scroll', { ...common, timestamp: at(t0) }),
    pageview(site, s, '/landing/', { ...common, url: 'https://example.com/landing/?q=1', timestamp: at(t0 + MIN) }),
    pageview(site, s, '/pricing', { ...common, referrer: 'https://google.com/', timestamp: at(t0 + 2 * MIN) }),
    customEvent(site, s, 'signup', { ...common, referrer: 'https://bing.com/', user_id: 'user-42', timestamp: at(t0 + 3 * MIN) }),
    pageview(site, s, '/thanks/?ok=1', { ...common, timestamp: at(t0 + 4 * MIN) }),
    { type: 'pageleave', site_id: site, session_id: s, path: '/thanks', duration: 60_000, ...common, timestamp: at(t0 + 5 * MIN) },
  ]
  await postEvents(server, events.reverse())
  await converted(site, signup.id, 1)
  const expected = {
    session_id: s, visitor_id: 'v-full', user_id: 'user-42', entry_page: '/landing', exit_page: '/thanks',
    referrer: 'https://google.com/', device: 'desktop', browser: 'Chrome', os: 'Linux', duration: 5 * MIN,
  }
  const bySignup = await sessionsPage(server, signup.id, { days: 7 })
  t.equal(bySignup.goal_id, signup.id)
  t.equal(bySignup.days, 7)
  t.equal(bySignup.conversions, 1)
  t.equal(bySignup.next_cursor, null)
  t.equal(bySignup.sessions.length, 1)
  const row = bySignup.sessions[0]
  for (const [key, value] of Object.entries(expected)) t.equal(row?.[key as keyof SessionRow], value, key)
  t.equal(ms(row?.started_at), t0, 'started_at is the first event, whatever its type')
  t.equal(ms(row?.timestamp), t0 + 3 * MIN, 'timestamp is the completing event')
  const byPage = await sessionsPage(server, thanks.id, { days: 7 })
  t.match(byPage.sessions[0], expected, 'the same summary under another goal')
  t.equal(ms(byPage.sessions[0]?.timestamp), t0 + 4 * MIN, 'completed by the pageview of /thanks/?ok=1')
  t.match(row?.started_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/, 'started_at is ISO 8601 UTC')
  t.match(row?.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/, 'timestamp is ISO 8601 UTC')
  for (const key of ['session_id', 'visitor_id', 'user_id', 'entry_page', 'exit_page', 'referrer', 'device', 'browser', 'os', 'duration', 'started_at', 'timestamp']) {
    t.ok(row !== undefined && key in row, `the row has ${key}`)
  }
})

t.test('device from the user agent, else from the screen width; nulls when unknown', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'go' })
  const cases: [string, EventBody, Partial<SessionRow>][] = [
    ['iphone', { user_agent: UA.iphone }, { device: 'mobile', os: 'iOS' }],
    ['ipad', { user_agent: UA.ipad }, { device: 'tablet', os: 'iOS' }],
    ['android', { user_agent: UA.androidPhone }, { device: 'mobile', os: 'Android' }],
    ['firefox', { user_agent: UA.firefoxWindows, screen: { width: 1366 } }, { device: 'desktop', browser: 'Firefox', os: 'Windows' }],
    ['w500', { screen: { width: 500 } }, { device: 'mobile', browser: null, os: null }],
    ['w767', { screen: { width: 767 } }, { device: 'mobile' }],
    ['w768', { screen: { width: 768 } }, { device: 'tablet' }],
    ['w1023', { screen: { width: 1023 } }, { device: 'tablet' }],
    ['w1024', { screen: { width: 1024 } }, { device: 'desktop' }],
    ['bare', {}, { device: null, browser: null, os: null, entry_page: null, exit_page: null, referrer: null, visitor_id: null, user_id: null, duration: 0 }],
  ]
  const ids = new Map<string, string>()
  const events = cases.map(([label, fields], i) => {
    const id = uid(label)
    ids.set(label, id)
    return { type: 'custom_event', site_id: site, session_id: id, event_name: 'go', timestamp: at(t0 + i * MIN), ...fields }
  })
  await postEvents(server, events)
  await converted(site, goal.id, cases.length)
  const rows = await allSessions(server, goal.id, 7)
  for (const [label, , want] of cases) {
    const row = rows.find((r) => r.session_id === ids.get(label))
    t.ok(row, `${label} is listed`)
    for (const [key, value] of Object.entries(want)) t.equal(row?.[key as keyof SessionRow], value, `${label}: ${key}`)
  }
  const iphone = rows.find((r) => r.session_id === ids.get('iphone'))
  t.match(iphone?.browser, /Safari/, 'an iPhone browses with Safari')
})

t.test('the summary covers the whole retained session; timestamp is the first completion inside the window', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
  const [k, l] = [uid('k'), uid('l')]
  const kStart = daysAgo(3, 9)
  const kEarly = daysAgo(2, 9)
  const kToday = daysAgo(0, 0, 20)
  await postEvents(server, [
    pageview(site, k, '/start', { timestamp: kStart, referrer: 'https://old.example/' }),
    pageview(site, k, '/buy', { timestamp: kEarly }),
    pageview(site, k, '/buy', { timestamp: kToday }),
    pageview(site, l, '/buy', { timestamp: daysAgo(2, 10) }),
  ])
  await converted(site, goal.id, 2)
  const one = await sessionsPage(server, goal.id, { days: 1 })
  t.same(one.sessions.map((r) => r.session_id), [k], 'days=1 lists only the session completing today')
  t.equal(one.conversions, 1)
  t.equal(ms(one.sessions[0]?.timestamp), ms(kToday), 'first completion inside a one-day window is today\'s')
  t.equal(ms(one.sessions[0]?.started_at), ms(kStart), 'started_at is outside the window')
  t.equal(one.sessions[0]?.entry_page, '/start')
  t.equal(one.sessions[0]?.referrer, 'https://old.example/')
  t.equal(one.sessions[0]?.duration, ms(kToday) - ms(kStart))
  const three = await sessionsPage(server, goal.id, { days: 3 })
  t.equal(three.conversions, 2)
  const kRow = three.sessions.find((r) => r.session_id === k)
  t.equal(ms(kRow?.timestamp), ms(kEarly), 'over three days the first completion is two days ago')
  t.same(three.sessions.map((r) => r.session_id), [l, k], 'ordered by that first completion (l at 10:00, k at 09:00)')
  const goals = (await getGoals(server, site, 3)).json as GoalsAnswer
  t.equal(goalIn(goals, goal.id)?.conversions, three.conversions, 'the same conversions as GET /api/goals')
})

t.test('newest completion first, ties ordered by session_id', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'order' })
  const tag = uid('o')
  const plan: [string, number][] = [
    [`${tag}-m`, t0 + 1 * MIN], [`${tag}-b`, t0 + 7 * MIN], [`${tag}-a`, t0 + 7 * MIN], [`${tag}-c`, t0 + 7 * MIN],
    [`${tag}-z`, t0 + 2 * MIN], [`${tag}-y`, t0 + 9 * MIN], [`${tag}-x`, t0 + 5 * MIN],
  ]
  const events: EventBody[] = plan.flatMap(([id, ts]) => [
    customEvent(site, id, 'order', { timestamp: at(ts) }),
    customEvent(site, id, 'order', { timestamp: at(ts + 10 * MIN) }),
  ])
  await postEvents(server, events)
  await converted(site, goal.id, plan.length)
  const rows = await allSessions(server, goal.id, 7)
  const want = plan.map(([id, ts]) => ({ id, ts })).sort(newestFirst).map((r) => r.id)
  t.same(rows.map((r) => r.session_id), want)
  t.same(rows.map((r) => ms(r.timestamp)), plan.map(([, ts]) => ts).sort((a, b) => b - a), 'timestamps are the first completions')
})

t.test('paging with limit and cursor: no duplicates, no gaps, stable while events arrive', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/paged' })
  const original = Array.from({ length: 7 }, (_, i) => ({ id: uid(`p${i}`), ts: t0 + i * MIN }))
  await postEvents(server, original.map((s) => pageview(site, s.id, '/paged', { timestamp: at(s.ts) })))
  await converted(site, goal.id, 7)
  const full = (await sessionsPage(server, goal.id, { days: 7, limit: 100 })).sessions.map((r) => r.session_id)
  t.same(full, [...original].sort(newestFirst).map((s) => s.id))

  const first = await sessionsPage(server, goal.id, { days: 7, limit: 3 })
  t.equal(first.sessions.length, 3)
  t.type(first.next_cursor, 'string')
  t.equal(first.conversions, 7)
  // new sessions converting now, and a listed session converting again: none may shift the pages ahead
  const newcomers = [uid('new'), uid('new')]
  await postEvents(server, [
    ...newcomers.map((id) => pageview(site, id, '/paged', { timestamp: at(Date.now() - MIN) })),
    pageview(site, first.sessions[0].session_id, '/paged', { timestamp: at(Date.now() - MIN) }),
  ])
  await converted(site, goal.id, 9)
  const second = await sessionsPage(server, goal.id, { days: 7, limit: 3, cursor: first.next_cursor! })
  t.equal(second.sessions.length, 3)
  const third = await sessionsPage(server, goal.id, { days: 7, limit: 3, cursor: second.next_cursor! })
  t.equal(third.sessions.length, 1)
  t.equal(third.next_cursor, null, 'the last page has no cursor')
  t.same([...first.sessions, ...second.sessions, ...third.sessions].map((r) => r.session_id), full, 'every original session once, in order')
  const fresh = await sessionsPage(server, goal.id, { days: 7, limit: 100 })
  t.equal(fresh.conversions, 9)
  t.same(fresh.sessions.slice(0, 2).map((r) => r.session_id).sort(), [...newcomers].sort(), 'the newcomers lead a fresh listing')
  t.same(fresh.sessions.slice(2).map((r) => r.session_id), full, 'a second completion does not move a session')
})

t.test('limit: default 25, bounds 1..100; bad parameters are 400 naming them', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'many' })
  await postEvents(server, Array.from({ length: 30 }, (_, i) => customEvent(site, uid('m'), 'many', { timestamp: at(t0 + i * 1000) })))
  await converted(site, goal.id, 30)
  const byDefault = await sessionsPage(server, goal.id)
  t.equal(byDefault.sessions.length, 25, 'default limit 25')
  t.equal(byDefault.days, 30, 'default days 30')
  t.type(byDefault.next_cursor, 'string')
  const rest = await sessionsPage(server, goal.id, { cursor: byDefault.next_cursor! })
  t.equal(rest.sessions.length, 5)
  t.equal(rest.next_cursor, null)
  t.equal(new Set([...byDefault.sessions, ...rest.sessions].map((r) => r.session_id)).size, 30, 'no duplicates')
  t.equal((await sessionsPage(server, goal.id, { limit: 1 })).sessions.length, 1)
  t.equal((await sessionsPage(server, goal.id, { limit: 100 })).sessions.length, 30)
  const get = (q: string) => server.admin('GET', `/api/goals/sessions?${q}`)
  for (const limit of ['0', '101', '-1', '1.5', 'abc']) namesField(t, await get(`id=${goal.id}&limit=${limit}`), 'limit', 400, `limit=${limit}`)
  for (const days of ['0', '91', 'x']) namesField(t, await get(`id=${goal.id}&days=${days}`), 'days', 400, `days=${days}`)
  namesField(t, await get(`id=${goal.id}&cursor=not-a-cursor`), 'cursor', 400, 'a cursor the server never made')
  namesField(t, await get('days=7'), 'id', 400, 'no id')
  isError(t, await get('id=no-such-goal'), 404)
})
