// Kafka mode, zombie writers: a node frozen (SIGSTOP) past its session timeout loses its partitions
// to the other node while ingestion goes on; when it wakes it must not write over its successor's
// state. After three such pauses the second node is killed and a third starts with an empty data
// directory: it restores from the changelog topic alone and must answer exactly, as must every
// node left. Meanwhile every node is polled: no answer may be lower than one already given.
import t from 'tap'
import { createGoal, createSite, getGoals, pollUntil, sleep, startServer, type EventBody, type GoalsAnswer, type Server } from './helpers/index.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { clusterEnv, describe, describeExpected, exactly, pump, Traffic, Truth, watchAnswers, type Pump } from './helpers/cluster.js'

const SESSION_TIMEOUT_MS = 6000
const PAUSES_MS = [9000, 7500, 7500]

async function answerOf(server: Server, site: string): Promise<GoalsAnswer | undefined> {
  const reply = await getGoals(server, site, 7).catch(() => undefined)
  return reply?.status === 200 ? (reply.json as GoalsAnswer) : undefined
}

async function owners(server: Server): Promise<Map<string, number[]>> {
  const reply = await server.admin('GET', '/api/status')
  const out = new Map<string, number[]>()
  if (reply.status !== 200) return out
  for (const p of (reply.json as { partitions: { partition: number; owner: string }[] }).partitions) {
    out.set(p.owner, [...(out.get(p.owner) ?? []), p.partition])
  }
  return out
}

t.test('a node paused past its session timeout cannot overwrite its successor; a node restoring from the changelog alone answers exactly', async (t) => {
  const started = Date.now()
  const env = clusterEnv(await sharedKafkaBrokers(), {
    GOALPOST_KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
    GOALPOST_PARTITIONS: '4',
    GOALPOST_SNAPSHOT_INTERVAL_MS: '200',
  })
  const a = await startServer({ t, env })
  const b = await startServer({ t, env })
  const site = (await createSite(a)).site_id
  const buy = await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/buy/*' })
  const signup = await createGoal(b, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const truth = new Truth([
    { id: buy.id, matches: (e: EventBody) => e.type === 'pageview' && /^\/buy\/[^/]+$/.test(String(e.path)) },
    { id: signup.id, matches: (e: EventBody) => e.type === 'custom_event' && e.event_name === 'signup' },
  ])
  await pollUntil(() => owners(a), (o) => o.size === 2, 30_000, 200)

  const live = new Set<Server>([a, b])
  const watcher = watchAnswers(() => [...live], site, [buy.id, signup.id])
  const viaA = new Traffic(site, 'a')
  const viaB = new Traffic(site, 'b')
  const refused: string[] = []
  let pumpA: Pump = pump(a, viaA, truth)
  const pumpB = pump(b, viaB, truth)
  await sleep(2000)

  for (const pauseMs of PAUSES_MS) {
    // both nodes fold: the one about to freeze holds changes it has not written yet
    await sleep(1000)
    await pumpA.stop()
    refused.push(...pumpA.refused)
    live.delete(a)
    a.pause()
    // the other node takes the frozen node's partitions over after the session timeout, and goes on
    await sleep(pauseMs)
    a.resume()
    live.add(a)
    pumpA = pump(a, viaA, truth)
    await sleep(2500)
  }
  await pumpA.stop()
  await pumpB.stop()
  refused.push(...pumpA.refused, ...pumpB.refused)
  t.same(refused, [], 'every batch was acknowledged')

  let want = truth.expected()
  t.comment(`truth: ${describeExpected(want)}`)
  for (const n of [a, b]) {
    const got = await pollUntil(() => answerOf(n, site), (x) => exactly(x, want), 30_000, 250)
    t.ok(exactly(got, want), `${n.url} answers exactly after the pauses: ${describe(got)}, truth ${describeExpected(want)}`)
  }

  // the second node dies; a third starts with nothing but the topics
  live.delete(b)
  await b.kill9()
  const c = await startServer({ t, env })
  live.add(c)
  want = truth.expected()
  for (const n of [a, c]) {
    const got = await pollUntil(() => answerOf(n, site), (x) => exactly(x, want), 45_000, 250)
    t.ok(exactly(got, want), `${n.url} answers exactly after the kill: ${describe(got)}, truth ${describeExpected(want)}`)
  }
  t.ok((await owners(c)).get(c.url)?.length, 'the new node owns partitions')

  // and the first node dies too: the new one restores its partitions from the changelog as well
  live.delete(a)
  await a.kill9()
  await pollUntil(() => owners(c), (o) => o.get(c.url)?.length === 4, 30_000, 250)
  const got = await pollUntil(() => answerOf(c, site), (x) => exactly(x, want), 30_000, 250)
  t.ok(exactly(got, want), `${c.url}, owning every partition, answers exactly: ${describe(got)}, truth ${describeExpected(want)}`)
  t.match(c.stdout(), /restored from the changelog/, 'the new node restored from the changelog')

  await watcher.stop()
  watcher.check(t)
  t.comment(`run time ${Math.round((Date.now() - started) / 1000)} s`)
})
