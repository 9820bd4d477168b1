// docs/architecture.md (snapshots, supervision) and docs/api.md §2 admin token: restarts (kill -9 and SIGTERM) on the same data directory.
import { randomBytes } from 'node:crypto'
import { stat } from 'node:fs/promises'
import t from 'tap'
import {
  startExpectingExit,
  allSessions, createGoal, filesHolding, createSite, customEvent, daysAgo, getGoals, goalIn, makeDataDir, minutesAgo, pageview,
  pollUntil, postEvent, postEvents, settledGoals, sleep, startServer, uid, userWithKey, type EventBody, type Goal,
  type GoalsAnswer, type Server,
} from './helpers/index.js'

const token = () => `admin-${randomBytes(16).toString('hex')}`

/** Everything a user could read about a site: the goals answer over several windows and every goal's sessions. */
async function answers(server: Server, siteId: string): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const days of [1, 7, 30]) {
    const reply = await getGoals(server, siteId, days)
    out[`goals:${days}`] = reply.status === 200 ? reply.json : `HTTP ${reply.status} ${reply.text}`
  }
  const goals = (out['goals:30'] as GoalsAnswer | string)
  if (typeof goals === 'string') return out
  for (const g of goals.goals) {
    for (const days of [1, 30]) out[`sessions:${g.id}:${days}`] = await allSessions(server, g.id, days, 7)
    for (const by of ['source', 'referrer', 'entry_page', 'device']) {
      const reply = await server.request('GET', `/api/goals/breakdown?id=${g.id}&days=30&by=${by}`, { token: server.adminToken })
      out[`breakdown:${g.id}:${by}`] = reply.status === 200 ? reply.json : `HTTP ${reply.status} ${reply.text}`
    }
    for (const q of ['days=30', 'days=2&interval=hour']) {
      const reply = await server.request('GET', `/api/goals/report?id=${g.id}&${q}`, { token: server.adminToken })
      out[`report:${g.id}:${q}`] = reply.status === 200 ? reply.json : `HTTP ${reply.status} ${reply.text}`
    }
  }
  const funnels = await server.request('GET', `/api/funnels?site_id=${siteId}`, { token: server.adminToken })
  for (const f of (funnels.json as { funnels?: { id: string }[] } | undefined)?.funnels ?? []) {
    const reply = await server.request('GET', `/api/funnels/report?id=${f.id}&days=30`, { token: server.adminToken })
    out[`funnel:${f.id}`] = reply.status === 200 ? reply.json : `HTTP ${reply.status} ${reply.text}`
  }
  const [a, b] = goals.goals
  if (a && b) {
    const reply = await server.request('GET', `/api/goals/overlap?a=${a.id}&b=${b.id}&days=30`, { token: server.adminToken })
    out.overlap = reply.status === 200 ? reply.json : `HTTP ${reply.status} ${reply.text}`
  }
  return out
}

/** The answers of a restarted server, polled until they equal `want` (state restored, log replayed) or time is up. */
async function answersAfterRestart(server: Server, siteId: string, want: unknown): Promise<unknown> {
  const same = (a: unknown) => JSON.stringify(a) === JSON.stringify(want)
  return pollUntil(() => answers(server, siteId), same, 8000, 200)
}

function traffic(siteId: string, n: number, tag: string): EventBody[] {
  const events: EventBody[] = []
  for (let i = 0; i < n; i++) {
    const s = `${tag}-${i}`
    const day = i % 4
    events.push(pageview(siteId, s, '/', { timestamp: day === 0 ? minutesAgo(30 - (i % 20)) : daysAgo(day, 8 + (i % 10)), referrer: i % 3 ? 'https://search.example/' : undefined }))
    if (i % 2 === 0) events.push(pageview(siteId, s, i % 4 ? '/pricing/' : '/blog/a/b', { timestamp: day === 0 ? minutesAgo(15 - (i % 10)) : daysAgo(day, 19) }))
    if (i % 3 === 0) events.push(customEvent(siteId, s, 'signup', { timestamp: day === 0 ? minutesAgo(10 - (i % 5)) : daysAgo(day, 20), user_id: `u${i}` }))
  }
  return events
}

t.test('kill -9 and SIGTERM restarts answer exactly as before', async (t) => {
  const dataDir = await makeDataDir(t)
  const env = { GOALPOST_ADMIN_TOKEN: token(), GOALPOST_SNAPSHOT_INTERVAL_MS: '200' }
  const first = await startServer({ t, dataDir, env })
  const site = (await createSite(first, { timezone: 'Europe/Berlin' })).site_id
  const goals: Goal[] = []
  for (const body of [{ goal_type: 'pageview', match_path: '/pricing' }, { goal_type: 'pageview', match_path: '/blog/**' }, { goal_type: 'custom_event', match_event: 'signup' }]) {
    goals.push(await createGoal(first, { site_id: site, ...body }))
  }
  const funnel = await first.admin('POST', '/api/funnels', { site_id: site, steps: [goals[0].id, goals[2].id], window_minutes: 120 })
  t.equal(funnel.status, 201, 'a funnel of the goals')
  const user = await userWithKey(first, [site])
  await postEvents(first, traffic(site, 40, uid('a')))
  for (let i = 0; i < 5; i++) t.equal((await postEvent(first, pageview(site, uid('single'), '/pricing'))).status, 202)
  await settledGoals(first, site, 30, (a) => a.total_sessions >= 45)
  await sleep(600) // let the 200 ms snapshot timer run, so that restore = snapshot + the log after it
  await postEvents(first, traffic(site, 12, uid('b')))
  await settledGoals(first, site, 30, (a) => a.total_sessions >= 57)
  const before = await answers(first, site)
  t.equal(((before as Record<string, GoalsAnswer>)['goals:30']).total_sessions, 57, 'every session counted before the crash')

  await first.kill9()
  const second = await startServer({ t, dataDir, env })
  t.same(await answersAfterRestart(second, site, before), before, 'after kill -9: identical answers')
  t.equal((await second.request('GET', `/api/goals?site_id=${site}`, { token: user.key })).status, 200, 'users and keys survive')

  const code = await second.stop()
  t.comment(`SIGTERM exit code ${code}`)
  const third = await startServer({ t, dataDir, env })
  t.same(await answersAfterRestart(third, site, before), before, 'after SIGTERM: identical answers')

  const late = await createGoal(third, { site_id: site, goal_type: 'pageview', match_path: '/' })
  await pollUntil(async () => (await getGoals(third, site, 30)).json as GoalsAnswer, (a) => goalIn(a, late.id)?.conversions === 52)
  const withLate = await answers(third, site)
  await third.kill9()
  const fourth = await startServer({ t, dataDir, env })
  t.same(await answersAfterRestart(fourth, site, withLate), withLate, 'a goal created after a restart survives the next one')
  const lateStats = goalIn((withLate as Record<string, GoalsAnswer>)['goals:30'], late.id)
  t.equal(lateStats?.conversions, 52, 'the late goal counted every earlier visit of / (retroactive)')
})

t.test('kill -9 right after a burst of acknowledged events: nothing lost, nothing counted twice', async (t) => {
  const dataDir = await makeDataDir(t)
  const adminToken = token()
  const noSnapshot = { GOALPOST_ADMIN_TOKEN: adminToken, GOALPOST_SNAPSHOT_INTERVAL_MS: '600000' }
  const first = await startServer({ t, dataDir, env: noSnapshot })
  const site = (await createSite(first)).site_id
  const goal = await createGoal(first, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  const tag = uid('burst')
  const singles = Array.from({ length: 60 }, (_, i) => pageview(site, `${tag}-s${i}`, i % 2 ? '/pricing' : '/', { timestamp: minutesAgo(3) }))
  const replies = await Promise.all(singles.map((e) => postEvent(first, e)))
  t.ok(replies.every((r) => r.status === 202), 'all 60 singles acknowledged')
  const batch = Array.from({ length: 100 }, (_, i) => [
    pageview(site, `${tag}-b${i}`, '/', { timestamp: minutesAgo(4) }),
    pageview(site, `${tag}-b${i}`, i % 2 ? '/pricing/' : '/about', { timestamp: minutesAgo(3) }),
  ]).flat()
  t.same((await postEvents(first, batch)).json, { status: 'ok', accepted: 200 })
  await first.kill9()

  const total = 160
  const conversions = 80
  const second = await startServer({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: adminToken } })
  const read = async () => (await getGoals(second, site, 7)).json as GoalsAnswer
  const after = await pollUntil(read, (a) => a?.total_sessions >= total && goalIn(a, goal.id)?.conversions === conversions, 10_000, 100)
  t.equal(after.total_sessions, total, 'every acknowledged session is counted')
  t.equal(goalIn(after, goal.id)?.conversions, conversions, 'every acknowledged conversion is counted once')
  const rows = await allSessions(second, goal.id, 7)
  t.equal(rows.length, conversions)
  t.equal(new Set(rows.map((r) => r.session_id)).size, conversions, 'no session listed twice')

  const settled = await answers(second, site)
  await second.kill9()
  const third = await startServer({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: adminToken } })
  t.same(await answersAfterRestart(third, site, settled), settled, 'a second crash and replay changes nothing')
})

t.test('without GOALPOST_ADMIN_TOKEN a token is generated, stored 0600 and printed on the first start only', async (t) => {
  const dataDir = await makeDataDir(t)
  if (process.env.GOALPOST_TEST_LOG === 'kafka') {
    // every node of a cluster must share one token: Kafka mode refuses to generate its own
    const run = await startExpectingExit({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: undefined } })
    t.not(run.code, 0)
    t.match(run.stderr, /GOALPOST_ADMIN_TOKEN must be set when GOALPOST_LOG=kafka/)
    return
  }
  const first = await startServer({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: undefined } })
  const printed = first.stdout() + first.stderr()
  const candidates = [...new Set(printed.match(/[A-Za-z0-9_\-.~+/=]{16,}/g) ?? [])].filter((c) => !dataDir.includes(c)).slice(0, 80)
  let adminToken: string | undefined
  for (const candidate of candidates) {
    if ((await first.request('GET', '/api/sites', { token: candidate })).status === 200) {
      adminToken = candidate
      break
    }
  }
  t.ok(adminToken, `a working admin token is printed on the first start\n${first.output()}`)
  if (!adminToken) return
  t.equal(printed.split(adminToken).length - 1, 1, 'printed once')

  const files = await filesHolding(dataDir, adminToken)
  t.ok(files.length > 0, 'stored in the data directory')
  for (const file of files) t.equal((await stat(file)).mode & 0o777, 0o600, `${file.slice(dataDir.length)} has mode 0600`)

  const site = uid('site')
  t.equal((await first.request('POST', '/api/sites', { token: adminToken, body: { site_id: site } })).status, 201, 'the generated token can create a site')
  await first.stop()

  const second = await startServer({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: undefined } })
  await sleep(300)
  t.notOk((second.stdout() + second.stderr()).includes(adminToken), 'not printed on the second start')
  const sites = await second.request('GET', '/api/sites', { token: adminToken })
  t.equal(sites.status, 200, 'the stored token still works')
  t.ok((sites.json?.sites ?? []).some((s: { site_id: string }) => s.site_id === site), 'and sees the site made before')
  t.equal((await second.request('GET', '/api/sites', { token: token() })).status, 401, 'another token does not')
  await second.stop()

  const fromEnv = token()
  const third = await startServer({ t, dataDir, env: { GOALPOST_ADMIN_TOKEN: fromEnv } })
  t.equal((await third.request('GET', '/api/sites', { token: fromEnv })).status, 200, 'GOALPOST_ADMIN_TOKEN wins over the stored one')
  t.notOk((third.stdout() + third.stderr()).includes(adminToken), 'the stored token is not printed either')
})
