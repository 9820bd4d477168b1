// Kafka mode, rebalances move only what they must: when a second node joins, the partitions that
// stay with the first keep their task and state (no last snapshot, no restore), and only the moved
// ones change hands; when the second node leaves, the first keeps its own again and takes the others
// back. Answers stay exact throughout, and no polled answer is ever lower than one already given.
import t from 'tap'
import { createGoal, createSite, getGoals, pollUntil, sleep, startServer, type EventBody, type GoalsAnswer, type Server } from './helpers/index.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { clusterEnv, describe, describeExpected, exactly, pump, Traffic, Truth, watchAnswers } from './helpers/cluster.js'

async function answerOf(server: Server, site: string): Promise<GoalsAnswer | undefined> {
  const reply = await getGoals(server, site, 7).catch(() => undefined)
  return reply?.status === 200 ? (reply.json as GoalsAnswer) : undefined
}

async function ownedBy(server: Server): Promise<Map<string, number[]>> {
  const reply = await server.admin('GET', '/api/status')
  const out = new Map<string, number[]>()
  if (reply.status !== 200) return out
  for (const p of (reply.json as { partitions: { partition: number; owner: string }[] }).partitions) {
    out.set(p.owner, [...(out.get(p.owner) ?? []), p.partition].sort((x, y) => x - y))
  }
  return out
}

/** how many times the node restored each partition (its 'partition restored' log lines) */
function restores(server: Server): Map<number, number> {
  const out = new Map<number, number>()
  for (const line of server.stdout().split('\n')) {
    if (!line.includes('"msg":"partition restored"')) continue
    const p = (JSON.parse(line) as { partition: number }).partition
    out.set(p, (out.get(p) ?? 0) + 1)
  }
  return out
}

t.test('a joining node moves only some partitions; the ones that stay are not restored again', async (t) => {
  const started = Date.now()
  const env = clusterEnv(await sharedKafkaBrokers(), {
    GOALPOST_KAFKA_SESSION_TIMEOUT_MS: '6000',
    GOALPOST_PARTITIONS: '4',
    GOALPOST_SNAPSHOT_INTERVAL_MS: '200',
  })
  const a = await startServer({ t, env })
  const site = (await createSite(a)).site_id
  const buy = await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/buy/*' })
  const signup = await createGoal(a, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const truth = new Truth([
    { id: buy.id, matches: (e: EventBody) => e.type === 'pageview' && /^\/buy\/[^/]+$/.test(String(e.path)) },
    { id: signup.id, matches: (e: EventBody) => e.type === 'custom_event' && e.event_name === 'signup' },
  ])
  const traffic = new Traffic(site, 'a')
  const live = new Set<Server>([a])
  const watcher = watchAnswers(() => [...live], site, [buy.id, signup.id])
  let sending = pump(a, traffic, truth)
  await sleep(1500)
  t.same([...restores(a)].sort(), [[0, 1], [1, 1], [2, 1], [3, 1]], 'the first node restored each partition once, at start')

  // a second node joins while traffic goes on
  const b = await startServer({ t, env })
  live.add(b)
  const split = await pollUntil(() => ownedBy(a), (o) => o.get(a.url)?.length === 2 && o.get(b.url)?.length === 2, 30_000, 200)
  const stayed = split.get(a.url) ?? []
  const moved = split.get(b.url) ?? []
  t.equal(stayed.length, 2, `the first node keeps ${stayed.join(',')}, the second takes ${moved.join(',')}`)
  await sleep(1500)
  await sending.stop()
  const refused = [...sending.refused]
  let want = truth.expected()
  for (const n of [a, b]) {
    const got = await pollUntil(() => answerOf(n, site), (x) => exactly(x, want), 30_000, 250)
    t.ok(exactly(got, want), `${n.url} answers exactly after the join: ${describe(got)}, truth ${describeExpected(want)}`)
  }
  const afterJoin = restores(a)
  for (const p of stayed) t.equal(afterJoin.get(p), 1, `partition ${p} stayed on the first node and was not restored again`)
  t.notMatch(a.stdout(), /"msg":"restored from the changelog"/, 'the first node read no changelog')
  t.same([...restores(b).keys()].sort(), moved, 'the second node restored only the partitions it took')

  // the second node leaves: the first keeps its own and takes the others back from the changelog
  sending = pump(a, traffic, truth)
  live.delete(b)
  t.equal(await b.stop(), 0, 'the second node stops cleanly')
  await pollUntil(() => ownedBy(a), (o) => o.get(a.url)?.length === 4, 30_000, 200)
  await sleep(1000)
  await sending.stop()
  want = truth.expected()
  const got = await pollUntil(() => answerOf(a, site), (x) => exactly(x, want), 30_000, 250)
  t.ok(exactly(got, want), `${a.url} answers exactly alone again: ${describe(got)}, truth ${describeExpected(want)}`)
  const afterLeave = restores(a)
  for (const p of stayed) t.equal(afterLeave.get(p), 1, `partition ${p} never left the first node and was restored once`)
  for (const p of moved) t.equal(afterLeave.get(p), 2, `partition ${p} came back and was restored again`)
  t.match(a.stdout(), /"msg":"restored from the changelog"/, 'what came back was restored from the changelog')
  t.same([...refused, ...sending.refused], [], 'every batch was acknowledged')

  await watcher.stop()
  watcher.check(t)
  t.comment(`run time ${Math.round((Date.now() - started) / 1000)} s`)
})
