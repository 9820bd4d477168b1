// docs/api.md, goal analytics: one goal's report per day and per hour, and two goals' overlap — exact, retroactive, checked against a truth computed here.
import t from 'tap'
import {
  createGoal, createSite, customEvent, daysAgo, isError, namesField, pageview, postEvents, settledGoals, goalIn,
  startServer, uid, userWithKey, type EventBody,
} from './helpers/index.js'

const server = await startServer({ t })
const HOUR = 3_600_000

interface ReportAnswer {
  goal: { id: string }
  days: number
  from: string
  to: string
  timezone: string
  total_sessions: number
  conversions: number
  conversion_rate: number
  revenue: unknown
  series: { start: string; sessions: number; conversions: number; conversion_rate: number }[]
}

const local = (ts: number, timeZone: string) => {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-CA', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', timeZoneName: 'longOffset',
  }).formatToParts(ts).map((p) => [p.type, p.value]))
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName.slice(3)
  const date = `${parts.year}-${parts.month}-${parts.day}`
  return { date, hour: `${date}T${parts.hour}:00:00${offset}` }
}

/** Distinct sessions per key. */
class Tally {
  readonly sets = new Map<string, Set<string>>()
  add(key: string, session: string): void {
    let s = this.sets.get(key)
    if (!s) this.sets.set(key, (s = new Set()))
    s.add(session)
  }
  count(key: string): number {
    return this.sets.get(key)?.size ?? 0
  }
}

/** A deterministic generator, so that a failure can be rerun. */
function random(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    return x / 0x7fffffff
  }
}

function shuffle<T>(list: T[], next: () => number): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

async function report(goalId: string, params: string, token = server.adminToken): Promise<ReportAnswer> {
  const reply = await server.request('GET', `/api/goals/report?id=${goalId}&${params}`, { token })
  if (reply.status !== 200) throw new Error(`report answered ${reply.status}: ${reply.text}`)
  return reply.json as ReportAnswer
}

t.test('a report per day and per hour counts distinct sessions and converters of each point, in the site\'s zone', async (t) => {
  const zone = 'America/New_York'
  const site = (await createSite(server, { timezone: zone })).site_id
  const next = random(7)
  const now = Date.now()
  const events: EventBody[] = []
  const sessions = { day: new Tally(), hour: new Tally(), window7: new Tally(), window2: new Tally() }
  const buyers = { day: new Tally(), hour: new Tally(), window7: new Tally(), window2: new Tally() }
  const today = local(now, zone).date
  const dates = new Set<string>()
  for (let d = 0; d < 7; d++) dates.add(local(now - d * 24 * HOUR, zone).date)
  const recent = new Set([today, local(now - 24 * HOUR, zone).date])
  const record = (tally: typeof sessions, ts: number, s: string) => {
    const at = local(ts, zone)
    tally.day.add(at.date, s)
    tally.hour.add(at.hour, s)
    if (dates.has(at.date)) tally.window7.add('all', s)
    if (recent.has(at.date)) tally.window2.add('all', s)
  }
  for (let i = 0; i < 120; i++) {
    const s = uid(`r${i}`)
    // sessions over the last three days, some of them long enough to cross hours and midnight
    const start = now - 2 * 60_000 - Math.floor(next() * 70 * HOUR)
    const steps = 1 + Math.floor(next() * 3)
    for (let k = 0; k < steps; k++) {
      const ts = Math.min(start + k * Math.floor(next() * 2 * HOUR), now - 60_000)
      events.push(pageview(site, s, `/p${k}`, { timestamp: new Date(ts).toISOString() }))
      record(sessions, ts, s)
      if (next() < 0.4) {
        events.push(customEvent(site, s, 'buy', { timestamp: new Date(ts).toISOString() }))
        record(sessions, ts, s)
        record(buyers, ts, s)
      }
    }
  }
  // the goal is created after its events: reports are retroactive
  await postEvents(server, shuffle(events, next))
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  await settledGoals(server, site, 7, (a) => goalIn(a, goal.id)?.conversions === buyers.window7.count('all'))

  const byDay = await report(goal.id, 'days=7')
  t.equal(byDay.goal.id, goal.id)
  t.equal(byDay.days, 7)
  t.equal(byDay.to, today)
  t.equal(byDay.timezone, zone)
  t.equal(byDay.revenue, null, 'a goal without a currency has no revenue')
  t.equal(byDay.total_sessions, sessions.window7.count('all'), 'total sessions of the window')
  t.equal(byDay.conversions, buyers.window7.count('all'), 'conversions of the window')
  t.equal(byDay.conversion_rate, byDay.conversions / byDay.total_sessions)
  t.equal(byDay.series.length, 7, 'one point per day')
  t.same(byDay.series.map((p) => p.start.slice(0, 10)), [...dates].reverse(), 'days oldest first')
  for (const p of byDay.series) {
    const date = p.start.slice(0, 10)
    t.match(p.start, /^\d{4}-\d{2}-\d{2}T00:00:00-0[45]:00$/, `${date} starts at local midnight with its offset`)
    t.equal(p.sessions, sessions.day.count(date), `${date}: sessions`)
    t.equal(p.conversions, buyers.day.count(date), `${date}: conversions`)
    t.equal(p.conversion_rate, p.sessions === 0 ? 0 : p.conversions / p.sessions, `${date}: rate`)
  }

  const byHour = await report(goal.id, 'days=2&interval=hour')
  t.equal(byHour.total_sessions, sessions.window2.count('all'))
  t.equal(byHour.conversions, buyers.window2.count('all'))
  const starts = byHour.series.map((p) => p.start)
  t.equal(new Set(starts.map((s) => s.slice(0, 10))).size, 2, 'two days of hours')
  t.ok(byHour.series.length >= 46 && byHour.series.length <= 50, `every hour of both days, later ones of today with zeros (${byHour.series.length})`)
  t.same(starts, [...starts].sort((a, b) => Date.parse(a) - Date.parse(b)), 'hours oldest first')
  for (const [label, set] of buyers.hour.sets) {
    if (recent.has(label.slice(0, 10))) t.ok(starts.includes(label), `the hour ${label} is a point`)
    void set
  }
  let summed = 0
  for (const p of byHour.series) {
    t.equal(p.sessions, sessions.hour.count(p.start), `${p.start}: sessions`)
    t.equal(p.conversions, buyers.hour.count(p.start), `${p.start}: conversions`)
    summed += p.conversions
  }
  t.ok(summed >= byHour.conversions, 'hours may sum to more than the window: a session buying in two hours counts in both')
  const later = byHour.series.filter((p) => Date.parse(p.start) > now)
  t.ok(later.every((p) => p.sessions === 0 && p.conversions === 0), 'hours still to come are zeros')
})

t.test('report parameters: 400 naming the parameter, 401, 404 as for an unknown goal', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/x' })
  const ask = (q: string, token = server.adminToken) => server.request('GET', `/api/goals/report?${q}`, { token })
  namesField(t, await ask('days=7'), 'id')
  namesField(t, await ask(`id=${goal.id}&days=0`), 'days')
  namesField(t, await ask(`id=${goal.id}&days=abc`), 'days')
  namesField(t, await ask(`id=${goal.id}&interval=week`), 'interval')
  namesField(t, await ask(`id=${goal.id}&days=8&interval=hour`), 'interval')
  t.equal((await ask(`id=${goal.id}&days=7&interval=hour`)).status, 200, 'hours of 7 days')
  isError(t, await ask(`id=${goal.id}`, 'not-a-token'), 401)
  isError(t, await ask('id=no-such-goal'), 404)
  const other = (await createSite(server)).site_id
  const stranger = await userWithKey(server, [other])
  isError(t, await ask(`id=${goal.id}`, stranger.key), 404, undefined, 'a goal of a site the caller cannot access')
  const owner = await userWithKey(server, [site])
  t.equal((await ask(`id=${goal.id}`, owner.key)).status, 200, 'the site\'s user')
})

t.test('overlap: both, either and one only, exact over the window, whatever the order of arrival', async (t) => {
  const site = (await createSite(server)).site_id
  const next = random(11)
  const events: EventBody[] = []
  const a7 = new Set<string>()
  const b7 = new Set<string>()
  const a1 = new Set<string>()
  const b1 = new Set<string>()
  for (let i = 0; i < 300; i++) {
    const s = uid(`o${i}`)
    for (const [name, into7, into1] of [['buy', a7, a1], ['pricing', b7, b1]] as const) {
      // each goal: not at all, once, or on two days
      const times = Math.floor(next() * 3)
      for (let k = 0; k < times; k++) {
        const day = Math.floor(next() * 4)
        const ts = daysAgo(day, Math.floor(next() * 23))
        events.push(name === 'buy' ? customEvent(site, s, 'buy', { timestamp: ts }) : pageview(site, s, '/pricing', { timestamp: ts }))
        into7.add(s)
        if (ts.slice(0, 10) === new Date().toISOString().slice(0, 10)) into1.add(s)
      }
    }
    events.push(pageview(site, s, '/', { timestamp: daysAgo(0) }))
  }
  await postEvents(server, shuffle(events, next))
  const a = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  const b = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  await settledGoals(server, site, 7, (g) => goalIn(g, a.id)?.conversions === a7.size && goalIn(g, b.id)?.conversions === b7.size)
  for (const [days, as, bs] of [[7, a7, b7], [1, a1, b1]] as const) {
    const reply = await server.request('GET', `/api/goals/overlap?a=${a.id}&b=${b.id}&days=${days}`, { token: server.adminToken })
    t.equal(reply.status, 200)
    const both = [...as].filter((s) => bs.has(s)).length
    t.same(reply.json, {
      a: { id: a.id, conversions: as.size }, b: { id: b.id, conversions: bs.size },
      both, a_only: as.size - both, b_only: bs.size - both, either: as.size + bs.size - both,
    }, `days=${days}: ${as.size} and ${bs.size}, ${both} both`)
  }
  const self = await server.request('GET', `/api/goals/overlap?a=${a.id}&b=${a.id}&days=7`, { token: server.adminToken })
  t.match(self.json, { both: a7.size, a_only: 0, b_only: 0, either: a7.size }, 'a goal overlaps itself entirely')
})

t.test('overlap parameters: 400 naming a, b or days; goals of two sites name b; 404 as for an unknown goal', async (t) => {
  const site = (await createSite(server)).site_id
  const other = (await createSite(server)).site_id
  const a = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/a' })
  const b = await createGoal(server, { site_id: other, goal_type: 'pageview', match_path: '/b' })
  const ask = (q: string, token = server.adminToken) => server.request('GET', `/api/goals/overlap?${q}`, { token })
  namesField(t, await ask(`b=${a.id}`), 'a')
  namesField(t, await ask(`a=${a.id}`), 'b')
  namesField(t, await ask(`a=${a.id}&b=${a.id}&days=0`), 'days')
  namesField(t, await ask(`a=${a.id}&b=${b.id}`), 'b')
  isError(t, await ask(`a=${a.id}&b=nope`), 404)
  isError(t, await ask(`a=${a.id}&b=${a.id}`, 'not-a-token'), 401)
  const user = await userWithKey(server, [site])
  isError(t, await ask(`a=${a.id}&b=${b.id}`, user.key), 404, undefined, 'a goal of a site the caller cannot access')
})

t.test('reports, overlap and funnels polled during a shuffled import with 50 ms snapshots: never above the truth, exact at the end', async (t) => {
  const busy = await startServer({ t, env: { GOALPOST_SNAPSHOT_INTERVAL_MS: '50' } })
  const site = (await createSite(busy)).site_id
  const token = busy.adminToken
  const a = await createGoal(busy, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  const b = await createGoal(busy, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  const funnel = await busy.request('POST', '/api/funnels', { token, body: { site_id: site, steps: [a.id, b.id], window_minutes: 120 } })
  t.equal(funnel.status, 201)
  const next = random(23)
  const now = Date.now()
  const events: EventBody[] = []
  const truth = { a: new Set<string>(), b: new Set<string>(), funnel: new Set<string>() }
  for (let i = 0; i < 1500; i++) {
    const s = uid(`i${i}`)
    // up to three days old, the purchase an hour after the pricing page (or before it)
    const seen = Math.min(now - 2 * HOUR - Math.floor(next() * 60 * HOUR), now - HOUR)
    events.push(pageview(site, s, '/pricing', { timestamp: new Date(seen).toISOString() }))
    truth.a.add(s)
    if (next() < 0.5) {
      const bought = seen + (next() < 0.8 ? 1 : -1) * HOUR
      events.push(customEvent(site, s, 'buy', { timestamp: new Date(bought).toISOString() }))
      truth.b.add(s)
      if (bought >= seen) truth.funnel.add(s)
    }
  }
  shuffle(events, next)
  const both = [...truth.a].filter((s) => truth.b.has(s)).length
  const polled: string[] = []
  let importing = true
  const poll = (async () => {
    while (importing) {
      const [r, o, f] = await Promise.all([
        busy.request('GET', `/api/goals/report?id=${b.id}&days=7`, { token }),
        busy.request('GET', `/api/goals/overlap?a=${a.id}&b=${b.id}&days=7`, { token }),
        busy.request('GET', `/api/funnels/report?id=${(funnel.json as { id: string }).id}&days=7`, { token }),
      ])
      for (const reply of [r, o, f]) if (reply.status !== 200 && reply.status !== 503) polled.push(`HTTP ${reply.status} ${reply.text}`)
      if (r.status === 200 && (r.json as ReportAnswer).conversions > truth.b.size) polled.push(`report ${r.text}`)
      if (o.status === 200 && ((o.json as { both: number }).both > both || (o.json as { a: { conversions: number } }).a.conversions > truth.a.size)) polled.push(`overlap ${o.text}`)
      if (f.status === 200 && (f.json as { steps: { sessions: number }[] }).steps[1].sessions > truth.funnel.size) polled.push(`funnel ${f.text}`)
    }
  })()
  // three connections, batches of 100
  const batches: EventBody[][] = []
  for (let i = 0; i < events.length; i += 100) batches.push(events.slice(i, i + 100))
  await Promise.all([0, 1, 2].map(async (k) => {
    for (let i = k; i < batches.length; i += 3) await postEvents(busy, batches[i])
  }))
  await settledGoals(busy, site, 7, (g) => goalIn(g, b.id)?.conversions === truth.b.size && goalIn(g, a.id)?.conversions === truth.a.size)
  importing = false
  await poll
  t.same(polled, [], 'every answer polled during the import was 200 or 503, and none above the truth')
  const overlap = await busy.request('GET', `/api/goals/overlap?a=${a.id}&b=${b.id}&days=7`, { token })
  t.same(overlap.json, {
    a: { id: a.id, conversions: truth.a.size }, b: { id: b.id, conversions: truth.b.size },
    both, a_only: truth.a.size - both, b_only: truth.b.size - both, either: truth.a.size + truth.b.size - both,
  }, 'the overlap is exact at the end')
  const report = await busy.request('GET', `/api/goals/report?id=${b.id}&days=7`, { token })
  t.equal((report.json as ReportAnswer).conversions, truth.b.size, 'the report is exact at the end')
  const steps = await busy.request('GET', `/api/funnels/report?id=${(funnel.json as { id: string }).id}&days=7`, { token })
  t.same((steps.json as { steps: { sessions: number }[] }).steps.map((s) => s.sessions), [truth.a.size, truth.funnel.size], 'the funnel is exact at the end')
})

t.test('the report of a goal with a currency carries the same revenue as GET /api/goals', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'buy', currency: 'EUR' })
  const amounts = ['49.90', '10', '0.0050', '100.1234']
  await postEvents(server, [
    ...amounts.map((amount, i) => customEvent(site, `p${i}`, 'buy', { revenue: { amount, currency: 'EUR' }, timestamp: daysAgo(i % 2) })),
    customEvent(site, 'usd', 'buy', { revenue: { amount: '5', currency: 'USD' }, timestamp: daysAgo(0) }),
  ])
  await settledGoals(server, site, 7, (a) => goalIn(a, goal.id)?.conversions === 5)
  const byDay = await report(goal.id, 'days=7')
  const listed = await server.request('GET', `/api/goals?site_id=${site}&days=7`, { token: server.adminToken })
  const fromList = (listed.json as { goals: { id: string; revenue: unknown }[] }).goals.find((g) => g.id === goal.id)?.revenue
  t.same(byDay.revenue, { currency: 'EUR', total: '160.0284', average: '32.0057', events: 4, other_currency_events: 1 }, 'exact sum, average per conversion')
  t.same(byDay.revenue, fromList, 'the same as the goals list')
})
