// docs/api.md §9.4: a goal's conversions and sessions per value of a session attribute — exact,
// fixed by each session's earliest events whatever order they arrive in, retroactive, and the same
// after kill -9. The truth is computed here from what was sent.
import t from 'tap'
import {
  UA, createGoal, createSite, customEvent, dateInZone, goalIn, pageview, pollUntil, postEvents, settledGoals,
  startServer, uid, userWithKey, type EventBody, type Server,
} from './helpers/index.js'

const ZONE = 'Europe/Berlin'
const HOUR = 3_600_000
const DIMENSIONS = ['source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'entry_page', 'device', 'browser', 'os', 'country'] as const
type Dimension = (typeof DIMENSIONS)[number]

/** what the parser says of the fixtures' user agents (docs/api.md §3) */
const CLIENTS: Record<string, { device: string; browser: string; os: string }> = {
  [UA.chromeLinux]: { device: 'desktop', browser: 'Chrome', os: 'Linux' },
  [UA.iphone]: { device: 'mobile', browser: 'Safari', os: 'iOS' },
  [UA.firefoxWindows]: { device: 'desktop', browser: 'Firefox', os: 'Windows' },
}

interface Row { value: string | null; sessions: number; conversions: number; conversion_rate: number }
interface Breakdown {
  goal_id: string
  days: number
  by: string
  total_sessions: number
  conversions: number
  rows: Row[]
  other: { sessions: number; conversions: number } | null
}

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

const hostOf = (url: string) => {
  const h = new URL(url).hostname.toLowerCase()
  return h.startsWith('www.') ? h.slice(4) : h
}

/** a session's attributes by the contract's rules, from all its events */
function attributesOf(events: EventBody[]): Record<Dimension, string | null> {
  const byTime = [...events].sort((a, b) => Date.parse(a.timestamp as string) - Date.parse(b.timestamp as string))
  const first = <T>(pick: (e: EventBody) => T | undefined | null | ''): T | null => {
    for (const e of byTime) {
      const v = pick(e)
      if (v !== undefined && v !== null && v !== '') return v
    }
    return null
  }
  const utm = (field: string) => first((e) => (e.utm as Record<string, string> | undefined)?.[field])
  const referrer = first((e) => {
    if (!e.referrer) return null
    const host = hostOf(e.referrer as string)
    return e.url && host === hostOf(e.url as string) ? null : host
  })
  const agent = first((e) => e.user_agent as string | undefined)
  const client = agent === null ? { device: null, browser: null, os: null } : CLIENTS[agent]
  const source = utm('source') ?? referrer
  return {
    source, referrer, utm_source: utm('source'), utm_medium: utm('medium'), utm_campaign: utm('campaign'),
    entry_page: first((e) => (e.type === 'pageview' ? (e.path as string) : null)),
    device: client.device, browser: client.browser, os: client.os, country: first((e) => e.country as string | undefined),
  }
}

/** The answer the contract asks for, from the sessions in the window and those that converted. */
function expected(by: Dimension, limit: number, sessions: Map<string, Record<Dimension, string | null>>, converted: Set<string>, total: number) {
  const values = new Map<string | null, { sessions: number; conversions: number }>()
  for (const [id, attrs] of sessions) {
    const v = values.get(attrs[by]) ?? { sessions: 0, conversions: 0 }
    v.sessions++
    if (converted.has(id)) v.conversions++
    values.set(attrs[by], v)
  }
  const ranked = [...values].filter(([, v]) => v.conversions > 0).sort(([a, x], [b, y]) => {
    if (x.conversions !== y.conversions) return y.conversions - x.conversions
    if (a === b) return 0
    if (a === null) return 1
    if (b === null) return -1
    return a < b ? -1 : 1
  })
  const rows = ranked.slice(0, limit).map(([value, v]) => ({ value, sessions: v.sessions, conversions: v.conversions, conversion_rate: v.sessions ? v.conversions / v.sessions : 0 }))
  const shown = new Set(rows.map((r) => r.value))
  const rest = [...values].filter(([value]) => !shown.has(value))
  const other = rest.length === 0 ? null : { sessions: rest.reduce((n, [, v]) => n + v.sessions, 0), conversions: rest.reduce((n, [, v]) => n + v.conversions, 0) }
  return { by, total_sessions: total, conversions: converted.size, rows, other }
}

async function breakdown(server: Server, goalId: string, params: string, token = server.adminToken): Promise<Breakdown> {
  const reply = await server.request('GET', `/api/goals/breakdown?id=${goalId}&${params}`, { token })
  if (reply.status !== 200) throw new Error(`breakdown answered ${reply.status}: ${reply.text}`)
  return reply.json as Breakdown
}

/** Sessions over the last five days, each with attributes spread over its events so that arrival order matters. */
function traffic(site: string, n: number, tag: string, next: () => number, now: number) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]
  const bySession = new Map<string, EventBody[]>()
  for (let i = 0; i < n; i++) {
    const id = `${tag}-${i}`
    const daysBack = i % 5
    // starts within the day, ends up to 3 hours later; today's sessions start 4 to 1 hours ago
    const start = daysBack === 0 ? now - (1 + next() * 3) * HOUR : now - daysBack * 24 * HOUR - next() * 6 * HOUR
    const at = (k: number) => new Date(start + k * 7 * 60_000).toISOString()
    const field = <T>(list: readonly T[], p = 0.6): T | undefined => (next() < p ? pick(list) : undefined)
    const extras = (): EventBody => {
      const e: EventBody = {}
      const ref = field(['https://www.Google.com/search?q=x', 'https://news.example/a', 'https://example.com/self', 'https://WWW.example.com/', 'android-app://com.slack/'])
      if (ref) e.referrer = ref
      const source = field(['newsletter', 'ads'], 0.3)
      const medium = field(['email', 'cpc'], 0.3)
      const campaign = field(['spring', 'autumn'], 0.2)
      if (source || medium || campaign) e.utm = { ...(source ? { source } : {}), ...(medium ? { medium } : {}), ...(campaign ? { campaign } : {}) }
      const country = field(['DE', 'FR', 'US'], 0.5)
      if (country) e.country = country
      return e
    }
    const events: EventBody[] = []
    const first = next() < 0.85
    if (first) events.push(pageview(site, id, pick(['/', '/pricing', '/blog/a', '/docs']), { timestamp: at(0), user_agent: pick(Object.keys(CLIENTS)), ...extras() }))
    events.push(pageview(site, id, pick(['/pricing', '/docs', '/thanks']), { timestamp: at(1), user_agent: pick(Object.keys(CLIENTS)), ...extras() }))
    if (next() < 0.45) events.push(customEvent(site, id, 'signup', { timestamp: at(2), user_agent: pick(Object.keys(CLIENTS)), ...extras() }))
    // a backend confirms some later: no client facts, but a country of its own that must not win over an earlier one
    if (next() < 0.3) {
      const late = Math.min(now - 60_000, start + (2 + next() * 2) * HOUR)
      events.push({ type: 'custom_event', site_id: site, session_id: id, event_name: 'signup', timestamp: new Date(late).toISOString(), country: 'JP', url: 'https://example.com/api' })
    }
    bySession.set(id, events)
  }
  return bySession
}

function truth(bySession: Map<string, EventBody[]>, days: number, now: number) {
  const from = dateInZone(now - (days - 1) * 24 * HOUR, ZONE)
  const inWindow = (e: EventBody) => dateInZone(e.timestamp as string, ZONE) >= from
  const sessions = new Map<string, Record<Dimension, string | null>>()
  const converted = new Set<string>()
  for (const [id, events] of bySession) {
    if (!events.some(inWindow)) continue
    sessions.set(id, attributesOf(events))
    if (events.some((e) => inWindow(e) && e.event_name === 'signup')) converted.add(id)
  }
  return { sessions, converted }
}

t.test('conversions and sessions per value, exact, from shuffled batches, for a goal created afterwards; and after kill -9', async (t) => {
  const env = { GOALPOST_SNAPSHOT_INTERVAL_MS: '50' }
  const server = await startServer({ t, env })
  const site = (await createSite(server, { timezone: ZONE })).site_id
  const next = random(11)
  const now = Date.now()
  const bySession = traffic(site, 240, uid('b'), next, now)
  const all = shuffle([...bySession.values()].flat(), next)
  // three connections at once, the later half of each session's events often first
  const batches: EventBody[][] = []
  for (let i = 0; i < all.length; i += 97) batches.push(all.slice(i, i + 97))
  for (let i = 0; i < batches.length; i += 3) {
    const replies = await Promise.all(batches.slice(i, i + 3).map((b) => postEvents(server, b)))
    for (const r of replies) t.equal(r.status, 202) || t.bailout(r.text)
  }
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })

  const want = new Map<string, ReturnType<typeof expected>>()
  for (const days of [7, 1]) {
    const { sessions, converted } = truth(bySession, days, now)
    await settledGoals(server, site, days, (a) => a.total_sessions === sessions.size && goalIn(a, goal.id)?.conversions === converted.size)
    for (const by of DIMENSIONS) {
      for (const limit of [10, 2]) {
        const w = expected(by, limit, sessions, converted, sessions.size)
        const got = await breakdown(server, goal.id, `days=${days}&by=${by}&limit=${limit}`)
        t.same({ by: got.by, total_sessions: got.total_sessions, conversions: got.conversions, rows: got.rows, other: got.other }, w, `${by}, ${days} days, limit ${limit}`)
        t.equal(got.rows.reduce((n, r) => n + r.conversions, 0) + (got.other?.conversions ?? 0), got.conversions, 'rows and other add up to the conversions')
        want.set(`${days}:${by}:${limit}`, w)
      }
    }
  }
  t.ok([...want.values()].some((w) => w.rows.some((r) => r.value === null)), 'some values were null (direct, unknown)')

  // default limit, and a kill -9 in the middle of it all: the counters and attributes are restored
  const before = await breakdown(server, goal.id, 'days=7&by=source')
  t.equal(before.rows.length <= 10, true)
  await server.kill9()
  const again = await startServer({ t, env, dataDir: server.dataDir })
  for (const [key, w] of want) {
    const [days, by, limit] = key.split(':')
    const got = await pollUntil(() => breakdown(again, goal.id, `days=${days}&by=${by}&limit=${limit}`), (g) => g.conversions === w.conversions && g.total_sessions === w.total_sessions, 10_000)
    t.same({ by: got.by, total_sessions: got.total_sessions, conversions: got.conversions, rows: got.rows, other: got.other }, w, `after kill -9: ${key}`)
  }
})

t.test('a conversion sent hours later by a backend is credited to the session\'s original source', async (t) => {
  const server = await startServer({ t })
  const site = (await createSite(server, { timezone: 'UTC' })).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'purchase' })
  const s = uid('s')
  const now = Date.now()
  const early = new Date(now - 5 * HOUR).toISOString()
  await postEvents(server, [pageview(site, s, '/landing', { timestamp: early, referrer: 'https://ads.example/x', utm: { source: 'spring-sale', medium: 'cpc' }, country: 'FR' })])
  await postEvents(server, [{ type: 'custom_event', site_id: site, session_id: s, event_name: 'purchase', timestamp: new Date(now - 60_000).toISOString(), referrer: 'https://stripe.example/', country: 'US' }])
  await settledGoals(server, site, 1, (a) => goalIn(a, goal.id)?.conversions === 1)
  const row = async (by: Dimension) => (await breakdown(server, goal.id, `days=1&by=${by}`)).rows
  t.same(await row('source'), [{ value: 'spring-sale', sessions: 1, conversions: 1, conversion_rate: 1 }])
  t.same(await row('referrer'), [{ value: 'ads.example', sessions: 1, conversions: 1, conversion_rate: 1 }])
  t.same(await row('country'), [{ value: 'FR', sessions: 1, conversions: 1, conversion_rate: 1 }])
  t.same(await row('entry_page'), [{ value: '/landing', sessions: 1, conversions: 1, conversion_rate: 1 }])
  t.same(await row('device'), [{ value: 'desktop', sessions: 1, conversions: 1, conversion_rate: 1 }])
})

t.test('parameters: 400 naming each, 401, 404 for an unknown goal or another site\'s', async (t) => {
  const server = await startServer({ t })
  const site = (await createSite(server)).site_id
  const otherSite = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/x' })
  const outsider = await userWithKey(server, [otherSite])
  const ask = (q: string, token = server.adminToken) => server.request('GET', `/api/goals/breakdown?${q}`, { token })
  const cases: [string, RegExp][] = [
    [`id=${goal.id}`, /\bby\b/], [`id=${goal.id}&by=planet`, /\bby\b/], [`id=${goal.id}&by=source&limit=0`, /\blimit\b/],
    [`id=${goal.id}&by=source&limit=101`, /\blimit\b/], [`id=${goal.id}&by=source&limit=x`, /\blimit\b/],
    [`id=${goal.id}&by=source&days=0`, /\bdays\b/], ['by=source', /\bid\b/],
  ]
  for (const [q, names] of cases) {
    const r = await ask(q)
    t.equal(r.status, 400, q)
    t.match((r.json as { error: string }).error, names, `${q} names the parameter`)
  }
  t.equal((await ask(`id=${goal.id}&by=source`, 'not-a-token')).status, 401)
  t.equal((await ask(`id=nope&by=source`)).status, 404)
  t.equal((await ask(`id=${goal.id}&by=source`, outsider.key)).status, 404, 'another site\'s goal is unknown to this key')
  const empty = await breakdown(server, goal.id, 'by=os&limit=100')
  t.same(empty, { goal_id: goal.id, days: 30, by: 'os', total_sessions: 0, conversions: 0, rows: [], other: null })
})
