// docs/api.md, goals: property conditions on event goals and revenue — validation, identity, exact counts and sums,
// retried event ids, payments, other currencies, arrival order, retroactive backfill and kill -9 restarts.
import { randomBytes } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import {
  createGoal, createSite, customEvent, goalIn, makeDataDir, minutesAgo, namesField, pollUntil,
  postEvent, postEvents, settledGoals, startServer, uid, type Asserts, type EventBody, type Goal, type GoalsAnswer, type Server,
} from './helpers/index.js'

interface Revenue {
  currency: string
  total: string
  average: string
  events: number
  other_currency_events: number
}
type Stats = Goal & { conversions: number; conversion_rate: number; revenue: Revenue | null; match_properties?: unknown; currency?: string }
const stats = (a: GoalsAnswer, id: string) => goalIn(a, id) as Stats | undefined

const server = await startServer({ t })
const newSite = async () => (await createSite(server)).site_id
const post = (body: Record<string, unknown>) => server.request('POST', '/api/goals', { token: server.adminToken, body })

t.test('property conditions and currency: 400s name the field', async (t) => {
  const site = await newSite()
  const event = { site_id: site, goal_type: 'custom_event', match_event: 'signup' }
  const cond = (c: Record<string, unknown>) => post({ ...event, match_properties: [{ key: 'plan', op: 'is', values: ['pro'] }, c] })
  namesField(t, await cond({ key: '', op: 'is', values: ['x'] }), 'match_properties[1].key')
  namesField(t, await cond({ key: 'k'.repeat(65), op: 'is', values: ['x'] }), 'match_properties[1].key')
  namesField(t, await cond({ key: 'k', op: 'equals', values: ['x'] }), 'match_properties[1].op')
  namesField(t, await cond({ key: 'k', op: 'is', values: [] }), 'match_properties[1].values')
  namesField(t, await cond({ key: 'k', op: 'is', values: Array.from({ length: 21 }, (_, i) => `v${i}`) }), 'match_properties[1].values')
  namesField(t, await cond({ key: 'k', op: 'is', values: ['v'.repeat(257)] }), 'match_properties[1].values')
  namesField(t, await cond({ key: 'k', op: 'is', values: [5] }), 'match_properties[1].values')
  namesField(t, await cond({ key: 'k', op: 'is' }), 'match_properties[1].values')
  namesField(t, await cond({ key: 'k', op: 'exists', values: ['x'] }), 'match_properties[1].values')
  namesField(t, await post({ ...event, match_properties: [] }), 'match_properties')
  namesField(t, await post({ ...event, match_properties: Array.from({ length: 9 }, (_, i) => ({ key: `k${i}`, op: 'exists' })) }), 'match_properties')
  namesField(t, await post({ ...event, match_properties: 'plan=pro' }), 'match_properties')
  namesField(t, await post({ site_id: site, goal_type: 'pageview', match_path: '/x', match_properties: [{ key: 'k', op: 'exists' }] }), 'match_properties')
  namesField(t, await post({ site_id: site, goal_type: 'pageview', match_path: '/x', currency: 'EUR' }), 'currency')
  for (const currency of ['eur', 'EURO', 'E1', 5]) namesField(t, await post({ ...event, currency }), 'currency', 400, JSON.stringify(currency))
})

t.test('revenue and event_id on events: 400s name the field', async (t) => {
  const site = await newSite()
  const buy = (extra: EventBody) => postEvent(server, customEvent(site, uid('s'), 'buy', extra))
  for (const amount of ['1.23456', '-1', '1e3', '1000000000000', 1e12, 1.23456, true]) {
    namesField(t, await buy({ revenue: { amount, currency: 'EUR' } }), 'revenue.amount', 400, JSON.stringify(amount))
  }
  for (const currency of ['eur', 'EURO', '']) namesField(t, await buy({ revenue: { amount: '1', currency } }), 'revenue.currency')
  namesField(t, await buy({ revenue: { currency: 'EUR' } }), 'revenue.amount')
  namesField(t, await postEvent(server, { type: 'pageview', site_id: site, session_id: 'x', revenue: { amount: '1', currency: 'EUR' } }), 'revenue')
  namesField(t, await buy({ event_id: 'has space' }), 'event_id')
  namesField(t, await buy({ event_id: 'x'.repeat(129) }), 'event_id')
  t.equal((await buy({ revenue: { amount: '49.90', currency: 'EUR' }, event_id: 'order:1' })).status, 202)
  t.equal((await postEvent(server, { type: 'payment', site_id: site, session_id: 'x', revenue: { amount: 12.5, currency: 'USD' } })).status, 202)
})

t.test('conditions and currency are part of the identity; the record and the name show them', async (t) => {
  const site = await newSite()
  const base = { site_id: site, goal_type: 'custom_event', match_event: 'signup' }
  const conditions = [{ key: 'plan', op: 'is', values: ['pro', 'team'] }, { key: 'coupon', op: 'exists' }]
  const goal = await createGoal(server, { ...base, match_properties: conditions, currency: 'EUR' }) as Stats
  t.same(goal.match_properties, conditions, 'the record holds the conditions')
  t.equal(goal.currency, 'EUR')
  t.equal(goal.name, 'Signup (plan is pro or team, coupon exists)', 'the generated name names them')
  const twin = await post({ ...base, match_properties: [{ key: 'coupon', op: 'exists' }, { key: 'plan', op: 'is', values: ['team', 'pro'] }], currency: 'EUR' })
  t.equal(twin.status, 409, 'order of conditions and values does not matter')
  t.equal(twin.json?.id, goal.id, 'the 409 names the existing goal')
  t.equal((await post({ ...base, match_properties: conditions })).status, 201, 'without the currency: another goal')
  t.equal((await post({ ...base, match_properties: conditions, currency: 'USD' })).status, 201, 'another currency: another goal')
  t.equal((await post({ ...base, match_properties: [{ key: 'plan', op: 'is', values: ['pro'] }], currency: 'EUR' })).status, 201, 'other values: another goal')
  t.equal((await post(base)).status, 201, 'the plain goal is another goal')
  t.equal((await post(base)).status, 409, 'and stays unique itself')
  const named = await createGoal(server, { ...base, name: 'Pro signups', match_properties: [{ key: 'plan', op: 'is_not', values: ['free'] }] })
  t.equal(named.name, 'Pro signups')
  const renamed = await server.request('PATCH', `/api/goals?id=${named.id}`, { token: server.adminToken, body: { name: '' } })
  t.equal(renamed.json?.name, 'Signup (plan is not free)', 'a blank name regenerates with the conditions')
  const listed = await settledGoals(server, site, 7)
  t.same(stats(listed, goal.id)?.match_properties, conditions, 'GET /api/goals shows the conditions')
  t.same(stats(listed, goal.id)?.revenue, { currency: 'EUR', total: '0.0000', average: '0.0000', events: 0, other_currency_events: 0 })
  t.equal(stats(listed, named.id)?.revenue, null, 'no currency: revenue null')
})

/** Events of a shop, each conversion a session of its own unless said. */
function shopEvents(site: string, tag: string): EventBody[] {
  const s = (i: number) => `${tag}-${i}`
  const buy = (i: number, extra: EventBody) => customEvent(site, s(i), 'purchase', { timestamp: minutesAgo(5 + i), ...extra })
  return [
    buy(1, { properties: { plan: 'pro' }, revenue: { amount: '49.90', currency: 'EUR' }, event_id: 'order-1' }),
    buy(1, { properties: { plan: 'pro' }, revenue: { amount: '49.90', currency: 'EUR' }, event_id: 'order-1' }), // a retry
    buy(2, { properties: { plan: 'team', seats: 5 }, revenue: { amount: 100.1, currency: 'EUR' } }),
    buy(3, { properties: { plan: 'pro', coupon: null }, revenue: { amount: '0.0001', currency: 'EUR' }, event_id: 'order-3' }),
    buy(3, { properties: { plan: 'pro', coupon: null }, revenue: { amount: '10', currency: 'EUR' }, event_id: 'order-4' }),
    buy(4, { properties: { plan: 'free' }, revenue: { amount: '7', currency: 'USD' }, event_id: 'order-5' }),
    buy(4, { properties: { plan: 'free' }, revenue: { amount: '7', currency: 'USD' }, event_id: 'order-5' }), // a retry
    buy(5, { properties: { plan: 'pro' } }), // no revenue
    buy(6, { properties: { plan: true, ref: 'newsletter-42' } }),
    buy(7, { properties: { seats: 49.5 }, revenue: { amount: '999999999999.9999', currency: 'EUR' } }),
    // the same event_id in another session is another purchase
    { type: 'payment', site_id: site, session_id: s(8), provider: 'stripe', timestamp: minutesAgo(3), revenue: { amount: '20', currency: 'EUR' }, event_id: 'order-1' },
    { type: 'payment', site_id: site, session_id: s(9), provider: 'stripe', timestamp: minutesAgo(3), revenue: { amount: '5.55', currency: 'GBP' } },
    customEvent(site, s(10), 'other', { properties: { plan: 'pro' }, revenue: { amount: '1000', currency: 'EUR' } }),
  ]
}

interface ShopGoals { all: string; pro: string; notFree: string; contains: string; exists: string; json: string; payment: string; plain: string }

async function shopGoals(server: Server, site: string): Promise<ShopGoals> {
  const goal = async (body: Record<string, unknown>) => (await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'purchase', ...body })).id
  return {
    all: await goal({ currency: 'EUR' }),
    pro: await goal({ currency: 'EUR', match_properties: [{ key: 'plan', op: 'is', values: ['pro'] }] }),
    notFree: await goal({ currency: 'USD', match_properties: [{ key: 'plan', op: 'is_not', values: ['free'] }] }),
    contains: await goal({ match_properties: [{ key: 'ref', op: 'contains', values: ['letter', 'zzz'] }] }),
    exists: await goal({ match_properties: [{ key: 'coupon', op: 'exists' }] }),
    json: await goal({ match_properties: [{ key: 'plan', op: 'is', values: ['true'] }, { key: 'ref', op: 'exists' }] }),
    payment: await goal({ match_event: 'payment', currency: 'EUR' }),
    plain: await goal({}),
  }
}

const SHOP_SESSIONS = 10

/** What shopEvents gives the goals of shopGoals over days=7. */
function checkShop(t: Asserts, a: GoalsAnswer, g: ShopGoals, label: string): void {
  const of = (id: string) => stats(a, id)
  t.equal(a.total_sessions, SHOP_SESSIONS, `${label}: sessions`)
  t.equal(of(g.plain)?.conversions, 7, `${label}: the plain goal`)
  t.equal(of(g.plain)?.revenue, null, `${label}: no currency, no revenue`)
  t.same(of(g.all)?.revenue, {
    currency: 'EUR', total: '1000000000160.0000', average: '142857142880.0000', events: 5, other_currency_events: 1,
  }, `${label}: EUR over every purchase; the retry once; USD counted apart`)
  t.equal(of(g.pro)?.conversions, 3, `${label}: plan is pro`)
  t.same(of(g.pro)?.revenue, { currency: 'EUR', total: '59.9001', average: '19.9667', events: 3, other_currency_events: 0 }, `${label}: pro revenue`)
  t.equal(of(g.notFree)?.conversions, 6, `${label}: plan is not free (absent included)`)
  t.same(of(g.notFree)?.revenue, { currency: 'USD', total: '0.0000', average: '0.0000', events: 0, other_currency_events: 5 }, `${label}: USD goal`)
  t.equal(of(g.contains)?.conversions, 1, `${label}: contains`)
  t.equal(of(g.exists)?.conversions, 1, `${label}: exists with a null value`)
  t.equal(of(g.json)?.conversions, 1, `${label}: true as JSON text`)
  t.equal(of(g.payment)?.conversions, 2, `${label}: payment events complete goals named payment`)
  t.same(of(g.payment)?.revenue, { currency: 'EUR', total: '20.0000', average: '10.0000', events: 1, other_currency_events: 1 }, `${label}: payment revenue`)
}

/** whether some file under `dir` holds a match of `key` (LevelDB keeps keys as they are) */
async function holdsKey(dir: string, key: RegExp): Promise<boolean> {
  for (const rel of await readdir(dir, { recursive: true })) {
    const file = join(dir, rel)
    const info = await stat(file).catch(() => undefined)
    if (!info?.isFile() || info.size > 16 * 1024 * 1024) continue
    const bytes = await readFile(file).catch(() => undefined)
    if (bytes && key.test(bytes.toString('latin1'))) return true
  }
  return false
}

function shuffled<T>(a: T[]): T[] {
  const out = [...a]
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomBytes(1)[0] % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

t.test('exact counts and sums, in any arrival order, live and retroactive', async (t) => {
  for (const order of ['as written', 'shuffled', 'one by one, reversed']) {
    const site = await newSite()
    const goals = await shopGoals(server, site)
    const events = shopEvents(site, uid('shop'))
    if (order === 'shuffled') await postEvents(server, shuffled(events))
    else if (order === 'as written') await postEvents(server, events)
    else for (const e of [...events].reverse()) t.equal((await postEvent(server, e)).status, 202)
    const a = await settledGoals(server, site, 7, (x) => x.total_sessions >= SHOP_SESSIONS && stats(x, goals.all)?.revenue?.events === 5)
    checkShop(t, a, goals, order)
  }
  const site = await newSite()
  await postEvents(server, shopEvents(site, uid('late')))
  await settledGoals(server, site, 7, (x) => x.total_sessions >= SHOP_SESSIONS)
  const goals = await shopGoals(server, site)
  const a = await settledGoals(server, site, 7, (x) => stats(x, goals.all)?.revenue?.events === 5 && stats(x, goals.payment)?.conversions === 2)
  checkShop(t, a, goals, 'goals created after the events')
})

t.test('kill -9: revenue and conditional conversions restore exactly, from a snapshot and from the log', async (t) => {
  const dataDir = await makeDataDir(t)
  const env = { GOALPOST_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`, GOALPOST_SNAPSHOT_INTERVAL_MS: '200' }
  const first = await startServer({ t, dataDir, env })
  const site = (await createSite(first)).site_id
  const goals = await shopGoals(first, site)
  const tag = uid('r')
  const events = shopEvents(site, tag)
  await postEvents(first, events.slice(0, 7))
  // the first half lies in a snapshot (its revenue keys are on disk) before the second half arrives
  t.ok(await pollUntil(() => holdsKey(dataDir, new RegExp(`r!\\d+!${goals.all}!`)), (found) => found, 10_000, 100), 'a snapshot wrote revenue')
  await postEvents(first, events.slice(7))
  const before = await settledGoals(first, site, 7, (x) => x.total_sessions >= SHOP_SESSIONS && stats(x, goals.payment)?.conversions === 2)
  checkShop(t, before, goals, 'before')
  await first.kill9()
  const second = await startServer({ t, dataDir, env })
  const after = await pollUntil(async () => (await second.request('GET', `/api/goals?site_id=${site}&days=7`, { token: env.GOALPOST_ADMIN_TOKEN })).json as GoalsAnswer,
    (a) => JSON.stringify(a) === JSON.stringify(before), 10_000, 100)
  t.same(after, before, 'identical answer after kill -9')
  // the same events again (a replaying importer): retries and positions make nothing count twice
  await postEvents(second, events.filter((e) => e.event_id !== undefined))
  await second.settle()
  const again = await settledGoals(second, site, 7)
  t.same(again, before, 'events re-sent with their event ids change nothing')
})

t.test('a time-zone change rebuilds revenue with the days, exactly once; a deleted goal takes its revenue along', async (t) => {
  const site = await newSite()
  const goals = await shopGoals(server, site)
  await postEvents(server, shopEvents(site, uid('tz')))
  const before = await settledGoals(server, site, 7, (x) => x.total_sessions >= SHOP_SESSIONS && stats(x, goals.payment)?.conversions === 2)
  checkShop(t, before, goals, 'in UTC')
  t.equal((await server.admin('PATCH', `/api/sites?site_id=${site}`, { timezone: 'Pacific/Kiritimati' })).status, 200)
  const read = async () => {
    const reply = await server.request('GET', `/api/goals?site_id=${site}&days=7`, { token: server.adminToken })
    return reply.status === 200 ? (reply.json as GoalsAnswer) : undefined
  }
  const after = await pollUntil(read, (a) => a?.timezone === 'Pacific/Kiritimati' && stats(a, goals.all)?.revenue?.events === 5 && a.total_sessions === SHOP_SESSIONS, 10_000, 100)
  checkShop(t, after!, goals, 're-bucketed in Pacific/Kiritimati')

  t.equal((await server.request('DELETE', `/api/goals?id=${goals.all}`, { token: server.adminToken })).status, 204)
  const again = (await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'purchase', currency: 'EUR' })).id
  const recreated = await settledGoals(server, site, 7, (a) => stats(a, again)?.revenue?.events === 5)
  t.same(stats(recreated, again)?.revenue, stats(after!, goals.all)?.revenue, 'the same goal again counts the same, from the log')
})
