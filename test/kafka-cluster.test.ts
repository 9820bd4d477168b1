// Kafka mode, several nodes in one group (one broker): any node answers every query with exactly
// what one node would say, and the survivors of a killed node take its partitions over and
// converge to the same answers.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import {
  allSessions, createGoal, createSite, customEvent, getGoals, pageview, pollUntil, postEvents, startServer, uid,
  type EventBody, type GoalsAnswer, type Server,
} from './helpers/index.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'

interface Expected {
  total: number
  conversions: Map<string, number>
}

/** The exact answer for a set of events: distinct sessions, and distinct sessions per goal matcher. */
function expect(events: EventBody[], goals: { id: string; matches: (e: EventBody) => boolean }[]): Expected {
  const sessions = new Set(events.map((e) => e.session_id))
  const conversions = new Map(goals.map((g) => [g.id, new Set(events.filter(g.matches).map((e) => e.session_id)).size]))
  return { total: sessions.size, conversions }
}

const same = (a: GoalsAnswer | undefined, want: Expected): boolean =>
  a !== undefined && a.total_sessions === want.total && a.goals.every((g) => g.conversions === want.conversions.get(g.id))

async function answerOf(server: Server, site: string): Promise<GoalsAnswer | undefined> {
  const reply = await getGoals(server, site, 7).catch(() => undefined)
  return reply?.status === 200 ? (reply.json as GoalsAnswer) : undefined
}

t.test('three nodes answer alike, and two survivors converge after one is killed', async (t) => {
  const brokers = (await sharedKafkaBrokers()).join(',')
  const env = {
    GOALPOST_LOG: 'kafka',
    GOALPOST_KAFKA_BROKERS: brokers,
    GOALPOST_KAFKA_PREFIX: `cluster-${randomBytes(4).toString('hex')}`,
    GOALPOST_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    GOALPOST_KAFKA_SESSION_TIMEOUT_MS: '6000',
    GOALPOST_PARTITIONS: '6',
    GOALPOST_EXACT_THRESHOLD: '100000',
    GOALPOST_SNAPSHOT_INTERVAL_MS: '500',
  }
  const nodes = [await startServer({ t, env })]
  nodes.push(await startServer({ t, env }), await startServer({ t, env }))
  const [a, b, c] = nodes as [Server, Server, Server]

  const site = (await createSite(a)).site_id
  // no waiting: a node that has not seen the site yet catches up with the config topic first
  const buy = await createGoal(b, { site_id: site, goal_type: 'pageview', match_path: '/buy/*' })
  const signup = await createGoal(c, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const goals = [
    { id: buy.id, matches: (e: EventBody) => e.type === 'pageview' && /^\/buy\/[^/]+$/.test(String(e.path)) },
    { id: signup.id, matches: (e: EventBody) => e.type === 'custom_event' && e.event_name === 'signup' },
  ]

  const sent: EventBody[] = []
  const send = async (via: Server, n: number, tag: string) => {
    const events: EventBody[] = []
    for (let i = 0; i < n; i++) {
      const s = `${tag}-${i}`
      events.push(pageview(site, s, '/'))
      if (i % 3 === 0) events.push(pageview(site, s, `/buy/${i}`))
      if (i % 4 === 0) events.push(customEvent(site, s, 'signup'))
    }
    const reply = await postEvents(via, events)
    t.equal(reply.status, 202, `batch via ${via.url}`)
    sent.push(...events)
  }
  await send(c, 200, uid('c'))
  await send(a, 200, uid('a'))
  await send(b, 200, uid('b'))
  for (const n of nodes) t.ok((await n.admin('GET', '/api/sites')).text.includes(site), `the site reached ${n.url}`)

  let want = expect(sent, goals)
  for (const n of nodes) {
    const got = await pollUntil(() => answerOf(n, site), (x) => same(x, want), 30_000, 200)
    t.ok(same(got, want), `${n.url} answers exactly: ${got?.total_sessions} sessions, ${got?.goals.map((g) => g.conversions)}`)
  }
  const viaA = await allSessions(a, buy.id, 7)
  const viaC = await allSessions(c, buy.id, 7)
  t.equal(viaA.length, want.conversions.get(buy.id), 'the sessions expansion lists every converted session')
  t.same(viaC, viaA, 'any node lists the same sessions in the same order')
  const sugA = await a.admin('GET', `/api/goals/suggestions?site_id=${site}&kind=path&q=/buy`)
  const sugB = await b.admin('GET', `/api/goals/suggestions?site_id=${site}&kind=path&q=/buy`)
  t.equal(sugA.status, 200)
  t.same(sugB.json, sugA.json, 'suggestions alike on every node')

  // the same goal created on every node at once: one winner across the cluster
  const racing = await Promise.all([a, b, c, a, b, c].map((n) => n.admin('POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'race' })))
  const created = racing.filter((r) => r.status === 201)
  t.equal(created.length, 1, `one 201 among ${racing.map((r) => r.status).join(' ')}`)
  const winner = (created[0]?.json as { id?: string } | undefined)?.id
  t.ok(racing.filter((r) => r.status === 409).every((r) => (r.json as { id?: string }).id === winner), 'every 409 names the winner')
  await b.admin('DELETE', `/api/goals?id=${winner}`)

  const status = await a.admin('GET', '/api/status')
  t.equal(status.status, 200)
  const body = status.json as { partitions: { partition: number; owner: string }[]; members: { url: string }[] }
  t.equal(body.partitions.length, 6, 'every partition has an owner')
  t.equal(new Set(body.partitions.map((p) => p.owner)).size, 3, 'spread over the three nodes')

  await c.kill9()
  await send(a, 100, uid('a2'))
  await send(b, 100, uid('b2'))
  want = expect(sent, goals)
  for (const n of [a, b]) {
    const got = await pollUntil(() => answerOf(n, site), (x) => same(x, want), 60_000, 250)
    t.ok(same(got, want), `${n.url} converges after the kill: ${got?.total_sessions} of ${want.total} sessions`)
  }
  const after = (await a.admin('GET', '/api/status')).json as { partitions: { owner: string }[] }
  t.notOk(after.partitions.some((p) => p.owner === c.url), 'the killed node owns nothing')
})
