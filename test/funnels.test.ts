// docs/api.md, funnels: create, list, delete, and the report — sessions reaching each step in order within the funnel's window, exact, checked against a truth computed here.
import t from 'tap'
import {
  createGoal, createSite, customEvent, goalIn, isError, namesField, pageview, postEvents, settledGoals, startServer,
  uid, userWithKey, type EventBody,
} from './helpers/index.js'

const server = await startServer({ t })
const MIN = 60_000
const DAY = 86_400_000

interface FunnelRecord {
  id: string
  site_id: string
  name: string
  steps: string[]
  window_minutes: number
  created_at: string
}

interface FunnelAnswer {
  funnel: FunnelRecord
  days: number
  from: string
  to: string
  total_sessions: number
  steps: { goal_id: string; name: string; sessions: number; conversion_rate: number; from_previous: number; drop_off: number }[]
}

function random(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    return x / 0x7fffffff
  }
}

async function createFunnel(body: Record<string, unknown>, token = server.adminToken): Promise<FunnelRecord> {
  const reply = await server.request('POST', '/api/funnels', { body, token })
  if (reply.status !== 201) throw new Error(`POST /api/funnels answered ${reply.status}: ${reply.text}`)
  return reply.json as FunnelRecord
}

async function funnelReport(id: string, days: number): Promise<FunnelAnswer> {
  const reply = await server.request('GET', `/api/funnels/report?id=${id}&days=${days}`, { token: server.adminToken })
  if (reply.status !== 200) throw new Error(`report answered ${reply.status}: ${reply.text}`)
  return reply.json as FunnelAnswer
}

/** The contract's rule, step by step, over each session's completions (epoch ms) of each step. */
function expected(completions: Map<string, number[][]>, windowMs: number, fromMs: number): number[] {
  const reached = [0, 0, 0]
  for (const steps of completions.values()) {
    const inWindow = steps.map((times) => times.filter((ts) => ts >= fromMs).sort((a, b) => a - b))
    const entered = inWindow[0][0]
    if (entered === undefined) continue
    reached[0]++
    let at = entered
    for (let k = 1; k < inWindow.length; k++) {
      const next = inWindow[k].find((ts) => ts >= at && ts <= entered + windowMs)
      if (next === undefined) break
      reached[k]++
      at = next
    }
  }
  return reached
}

t.test('a funnel report follows each session through the steps in order, within the window, whatever the arrival order', async (t) => {
  const site = (await createSite(server)).site_id
  const next = random(5)
  const now = Date.now()
  const todayStart = Math.floor(now / DAY) * DAY
  const events: EventBody[] = []
  const completions = new Map<string, number[][]>()
  for (let i = 0; i < 250; i++) {
    const s = uid(`f${i}`)
    const steps: number[][] = [[], [], []]
    // a visit of up to two hours, somewhere in the last three days
    const start = now - 2 * MIN - Math.floor(next() * 3 * DAY)
    for (let k = 0; k < 6; k++) {
      const ts = Math.min(start + Math.floor(next() * 120) * MIN, now - MIN)
      const step = Math.floor(next() * 3)
      steps[step].push(ts)
      const at = new Date(ts).toISOString()
      events.push(step === 0 ? pageview(site, s, '/pricing', { timestamp: at })
        : customEvent(site, s, step === 1 ? 'cart' : 'buy', { timestamp: at }))
    }
    completions.set(s, steps)
  }
  // sessions the rule is easy to get wrong for: cart before and after pricing; cart past the window
  const early = uid('early')
  completions.set(early, [[now - 60 * MIN], [now - 90 * MIN, now - 50 * MIN], [now - 40 * MIN]])
  const late = uid('late')
  completions.set(late, [[now - 100 * MIN], [now - 20 * MIN], [now - 10 * MIN]])
  for (const s of [early, late]) {
    const [p, c, b] = completions.get(s)!
    for (const ts of p) events.push(pageview(site, s, '/pricing', { timestamp: new Date(ts).toISOString() }))
    for (const ts of c) events.push(customEvent(site, s, 'cart', { timestamp: new Date(ts).toISOString() }))
    for (const ts of b) events.push(customEvent(site, s, 'buy', { timestamp: new Date(ts).toISOString() }))
  }
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[events[i], events[j]] = [events[j], events[i]]
  }
  for (let i = 0; i < events.length; i += 1000) await postEvents(server, events.slice(i, i + 1000))
  const pricing = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  const cart = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'cart' })
  const buy = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  const funnel = await createFunnel({ site_id: site, steps: [pricing.id, cart.id, buy.id], window_minutes: 45 })
  t.equal(funnel.name, 'Visit /pricing → Cart → Buy', 'the generated name joins the step names')
  t.equal(funnel.window_minutes, 45)
  const buyers = [...completions.values()].filter((steps) => steps[2].some((ts) => ts >= todayStart - 6 * DAY)).length
  await settledGoals(server, site, 7, (a) => goalIn(a, buy.id)?.conversions === buyers)

  for (const days of [7, 1]) {
    const from = todayStart - (days - 1) * DAY
    const want = expected(completions, 45 * MIN, from)
    const got = await funnelReport(funnel.id, days)
    t.equal(got.funnel.id, funnel.id)
    t.equal(got.days, days)
    t.same(got.steps.map((s) => s.sessions), want, `days=${days}: sessions per step ${want.join(' → ')}`)
    t.same(got.steps.map((s) => s.goal_id), [pricing.id, cart.id, buy.id])
    t.same(got.steps.map((s) => s.name), ['Visit /pricing', 'Cart', 'Buy'])
    t.equal(got.steps[0].from_previous, 1)
    t.equal(got.steps[0].drop_off, 0)
    for (let k = 1; k < 3; k++) {
      const prev = want[k - 1]
      t.equal(got.steps[k].from_previous, prev === 0 ? 0 : want[k] / prev, `step ${k + 1}: from_previous`)
      t.equal(got.steps[k].drop_off, prev - want[k], `step ${k + 1}: drop_off`)
      t.equal(got.steps[k].conversion_rate, got.total_sessions === 0 ? 0 : want[k] / got.total_sessions)
    }
  }
})

t.test('two sessions that show the rule: a repeated step, and a step past the window', async (t) => {
  const site = (await createSite(server)).site_id
  const now = Date.now()
  const a = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'a' })
  const b = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'b' })
  const funnel = await createFunnel({ site_id: site, steps: [a.id, b.id], window_minutes: 30 })
  t.equal(funnel.window_minutes, 30)
  const at = (m: number) => new Date(now - m * MIN).toISOString()
  // `again` does b, then a, then b again 10 minutes later; `slow` does b 40 minutes after a
  await postEvents(server, [
    customEvent(site, 'again', 'b', { timestamp: at(60) }),
    customEvent(site, 'again', 'a', { timestamp: at(50) }),
    customEvent(site, 'again', 'b', { timestamp: at(40) }),
    customEvent(site, 'slow', 'a', { timestamp: at(50) }),
    customEvent(site, 'slow', 'b', { timestamp: at(10) }),
  ].reverse())
  // the events are up to an hour old: a two-day window holds them all, even just after midnight
  await settledGoals(server, site, 2, (g) => goalIn(g, b.id)?.conversions === 2)
  const got = await funnelReport(funnel.id, 2)
  t.same(got.steps.map((s) => s.sessions), [2, 1], 'both enter; only the one whose b came again in time reaches it')
  t.equal(got.total_sessions, 2)
  t.equal(got.steps[1].from_previous, 0.5)
  t.equal(got.steps[1].drop_off, 1)
})

t.test('funnels: create, list in creation order, delete; a goal\'s deletion deletes its funnels', async (t) => {
  const site = (await createSite(server)).site_id
  const g = await Promise.all(['x', 'y', 'z'].map((e) => createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: e })))
  const first = await createFunnel({ site_id: site, steps: [g[0].id, g[1].id] })
  t.equal(first.window_minutes, 60, 'the default window is an hour')
  t.equal(first.site_id, site)
  t.match(first.created_at, /^\d{4}-\d{2}-\d{2}T/)
  const second = await createFunnel({ site_id: site, name: 'Mine', steps: [g[1].id, g[2].id, g[0].id], window_minutes: 10080 })
  t.equal(second.name, 'Mine')
  const list = await server.request('GET', `/api/funnels?site_id=${site}`, { token: server.adminToken })
  t.same(list.json, { funnels: [first, second] }, 'both, in creation order')
  t.equal((await server.request('DELETE', `/api/funnels?id=${first.id}`, { token: server.adminToken })).status, 204)
  isError(t, await server.request('GET', `/api/funnels/report?id=${first.id}`, { token: server.adminToken }), 404)
  isError(t, await server.request('DELETE', `/api/funnels?id=${first.id}`, { token: server.adminToken }), 404)
  t.equal((await server.request('DELETE', `/api/goals?id=${g[2].id}`, { token: server.adminToken })).status, 204)
  const after = await server.request('GET', `/api/funnels?site_id=${site}`, { token: server.adminToken })
  t.same(after.json, { funnels: [] }, 'the funnel using the deleted goal is gone')
})

t.test('funnel parameters: 400 naming steps, steps[i], window_minutes or name; 401, 403, 404', async (t) => {
  const site = (await createSite(server)).site_id
  const other = (await createSite(server)).site_id
  const [a, b] = await Promise.all(['a', 'b'].map((e) => createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: e })))
  const foreign = await createGoal(server, { site_id: other, goal_type: 'custom_event', match_event: 'a' })
  const post = (body: unknown, token = server.adminToken) => server.request('POST', '/api/funnels', { body, token })
  namesField(t, await post({ site_id: site }), 'steps')
  namesField(t, await post({ site_id: site, steps: [a.id] }), 'steps')
  namesField(t, await post({ site_id: site, steps: Array.from({ length: 9 }, (_, i) => (i % 2 ? a.id : b.id)) }), 'steps')
  namesField(t, await post({ site_id: site, steps: 'a' }), 'steps')
  namesField(t, await post({ site_id: site, steps: [a.id, 'nope'] }), 'steps[1]')
  namesField(t, await post({ site_id: site, steps: [a.id, foreign.id] }), 'steps[1]', 400, 'a goal of another site')
  namesField(t, await post({ site_id: site, steps: [a.id, a.id] }), 'steps[1]', 400, 'a goal following itself')
  t.equal((await post({ site_id: site, steps: [a.id, b.id, a.id] })).status, 201, 'a goal may come back later')
  namesField(t, await post({ site_id: site, steps: [a.id, b.id], window_minutes: 0 }), 'window_minutes')
  namesField(t, await post({ site_id: site, steps: [a.id, b.id], window_minutes: 10081 }), 'window_minutes')
  namesField(t, await post({ site_id: site, steps: [a.id, b.id], window_minutes: 1.5 }), 'window_minutes')
  namesField(t, await post({ site_id: site, steps: [a.id, b.id], name: 'n'.repeat(257) }), 'name')
  isError(t, await post({ site_id: site, steps: [a.id, b.id] }, 'bad-token'), 401)
  const user = await userWithKey(server, [other])
  isError(t, await post({ site_id: site, steps: [a.id, b.id] }, user.key), 403)
  isError(t, await server.request('GET', `/api/funnels?site_id=${site}`, { token: user.key }), 403)
  namesField(t, await server.request('GET', '/api/funnels', { token: server.adminToken }), 'site_id')
  const mine = await createFunnel({ site_id: site, steps: [a.id, b.id] })
  isError(t, await server.request('GET', `/api/funnels/report?id=${mine.id}`, { token: user.key }), 404, undefined, 'a funnel of a site the caller cannot access')
  isError(t, await server.request('DELETE', `/api/funnels?id=${mine.id}`, { token: user.key }), 404)
  namesField(t, await server.request('GET', `/api/funnels/report?id=${mine.id}&days=0`, { token: server.adminToken }), 'days')
  namesField(t, await server.request('GET', '/api/funnels/report', { token: server.adminToken }), 'id')
})
