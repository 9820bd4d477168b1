// docs/api.md §9.5, §9.6: overlap and funnels of sessions whose conversions fall on several days
// (across midnight, or a conversion sent hours later) stay exact as goals exist before the events,
// as the same days are asked again, and after kill -9 and a restart — checked against a truth
// computed here.
import t from 'tap'
import { join } from 'node:path'
import { Level } from 'level'
import {
  createGoal, createSite, customEvent, goalIn, makeDataDir, pageview, postEvents, settledGoals, startServer, uid,
  type EventBody, type Server,
} from './helpers/index.js'

const DAY = 86_400_000
const MIN = 60_000

function random(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    return x / 0x7fffffff
  }
}

interface Truth {
  buy: Map<string, number[]>
  pricing: Map<string, number[]>
}

/**
 * Sessions starting over the last six days; half cross midnight or come back a day or two later.
 * Each visits /pricing and buys at random times of its span. Shuffled: earlier events arrive late.
 */
function sessions(site: string, n: number, next: () => number): { events: EventBody[]; truth: Truth } {
  const events: EventBody[] = []
  const truth: Truth = { buy: new Map(), pricing: new Map() }
  const today = Math.floor(Date.now() / DAY) * DAY
  for (let i = 0; i < n; i++) {
    const s = uid(`x${i}`)
    const start = today - (1 + Math.floor(next() * 5)) * DAY + (20 + next() * 3.9) * 3_600_000
    const span = next() < 0.5 ? (1 + next() * 40) * 3_600_000 : next() * 30 * MIN
    // never in the future: a span from yesterday evening ends now at the latest
    const times = () => Math.min(Math.floor(start + next() * span), Date.now() - 2 * MIN)
    events.push(pageview(site, s, '/', { timestamp: new Date(start).toISOString() }))
    for (let k = Math.floor(next() * 3); k > 0; k--) {
      const ts = times()
      events.push(customEvent(site, s, 'buy', { timestamp: new Date(ts).toISOString() }))
      truth.buy.set(s, [...(truth.buy.get(s) ?? []), ts])
    }
    for (let k = Math.floor(next() * 3); k > 0; k--) {
      const ts = times()
      events.push(pageview(site, s, '/pricing', { timestamp: new Date(ts).toISOString() }))
      truth.pricing.set(s, [...(truth.pricing.get(s) ?? []), ts])
    }
  }
  for (let i = events.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[events[i], events[j]] = [events[j], events[i]]
  }
  return { events, truth }
}

/** the window of `days` days ending today (UTC), in epoch ms */
const windowStart = (days: number) => Math.floor(Date.now() / DAY) * DAY - (days - 1) * DAY

function overlapTruth(truth: Truth, days: number) {
  const from = windowStart(days)
  const inWindow = (m: Map<string, number[]>) => new Set([...m].filter(([, ts]) => ts.some((x) => x >= from)).map(([s]) => s))
  const a = inWindow(truth.buy)
  const b = inWindow(truth.pricing)
  const both = [...a].filter((s) => b.has(s)).length
  return { a: a.size, b: b.size, both }
}

/** funnel buy → /pricing within `minutes`: entered at the first buy of the window, then a visit at or after it */
function funnelTruth(truth: Truth, days: number, minutes: number): number[] {
  const from = windowStart(days)
  const reached = [0, 0]
  for (const [s, buys] of truth.buy) {
    const entered = Math.min(...buys.filter((ts) => ts >= from))
    if (entered === Infinity) continue
    reached[0]++
    if ((truth.pricing.get(s) ?? []).some((ts) => ts >= from && ts >= entered && ts <= entered + minutes * MIN)) reached[1]++
  }
  return reached
}

async function answers(server: Server, a: string, b: string, funnel: string, days: number) {
  const overlap = await server.request('GET', `/api/goals/overlap?a=${a}&b=${b}&days=${days}`, { token: server.adminToken })
  const report = await server.request('GET', `/api/funnels/report?id=${funnel}&days=${days}`, { token: server.adminToken })
  if (overlap.status !== 200 || report.status !== 200) throw new Error(`overlap ${overlap.status}, funnel ${report.status}: ${overlap.text} ${report.text}`)
  const o = overlap.json as { a: { conversions: number }; b: { conversions: number }; both: number }
  const f = report.json as { steps: { sessions: number }[] }
  return { overlap: { a: o.a.conversions, b: o.b.conversions, both: o.both }, funnel: f.steps.map((s) => s.sessions) }
}

t.test('overlap and funnels of sessions on several days: exact as they fold, asked again, and after kill -9', async (t) => {
  const dataDir = await makeDataDir(t)
  let server = await startServer({ dataDir, env: { GOALPOST_SNAPSHOT_INTERVAL_MS: '200' } })
  const site = (await createSite(server)).site_id
  // the goals and the funnel first: the live fold counts every event and links the sessions itself
  const a = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  const b = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  const made = await server.request('POST', '/api/funnels', { token: server.adminToken, body: { site_id: site, name: 'Buy then pricing', steps: [a.id, b.id], window_minutes: 600 } })
  t.equal(made.status, 201)
  const funnel = (made.json as { id: string }).id
  const next = random(29)
  const { events, truth } = sessions(site, 400, next)
  const want = (days: number) => ({ overlap: overlapTruth(truth, days), funnel: funnelTruth(truth, days, 600) })
  t.ok(want(7).overlap.both > 20 && want(7).funnel[1] > 20, `${want(7).overlap.both} sessions did both, ${want(7).funnel[1]} went through`)

  // in two halves, asked after each: the second half changes days already asked about
  const half = Math.floor(events.length / 2)
  await postEvents(server, events.slice(0, half))
  await settledGoals(server, site, 7)
  await answers(server, a.id, b.id, funnel, 7)
  await postEvents(server, events.slice(half))
  await settledGoals(server, site, 7, (g) => goalIn(g, a.id)?.conversions === want(7).overlap.a)
  for (const days of [7, 3, 1, 7]) t.same(await answers(server, a.id, b.id, funnel, days), want(days), `days=${days}`)

  await server.kill9()
  server = await startServer({ dataDir })
  await settledGoals(server, site, 7, (g) => goalIn(g, a.id)?.conversions === want(7).overlap.a)
  for (const days of [7, 3, 1]) t.same(await answers(server, a.id, b.id, funnel, days), want(days), `after kill -9 and a restart, days=${days}`)

  // a state whose snapshots never said they are linked (as a build before the links wrote them):
  // the restore links it again, and the answers are the same
  await server.kill9()
  const db = new Level<string, string>(join(dataDir, 'state'))
  const marks = await db.keys({ gte: 'a!', lt: 'a!\xff' }).all()
  t.ok(marks.length > 0, `${marks.length} partitions were marked linked`)
  await db.batch(marks.map((key) => ({ type: 'del' as const, key })))
  await db.close()
  server = await startServer({ dataDir, t })
  await settledGoals(server, site, 7, (g) => goalIn(g, a.id)?.conversions === want(7).overlap.a)
  for (const days of [7, 3, 1]) t.same(await answers(server, a.id, b.id, funnel, days), want(days), `linked again after a restart, days=${days}`)
})
