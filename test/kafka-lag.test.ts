// Kafka mode: a partition that has folded everything reports no lag, though the last transaction's
// commit marker takes an offset no fold reads; and a restart resumes from there with nothing lost.
import t from 'tap'
import { createGoal, createSite, getGoals, makeDataDir, pageview, pollUntil, postEvents, startServer, uid, type GoalsAnswer, type Server } from './helpers/index.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { clusterEnv } from './helpers/cluster.js'

interface StatusRow {
  partition: number
  offset: number
  end: number
  lag: number
}

async function status(server: Server): Promise<StatusRow[] | undefined> {
  const reply = await server.admin('GET', '/api/status')
  return reply.status === 200 ? (reply.json as { partitions: StatusRow[] }).partitions : undefined
}

async function conversions(server: Server, site: string): Promise<number | undefined> {
  const reply = await getGoals(server, site, 7)
  return reply.status === 200 ? (reply.json as GoalsAnswer).goals[0]?.conversions : undefined
}

t.test('every partition reads lag 0 once folded, past the commit markers, before and after a restart', async (t) => {
  const env = clusterEnv(await sharedKafkaBrokers(), { GOALPOST_PARTITIONS: '4', GOALPOST_SNAPSHOT_INTERVAL_MS: '200' })
  const dataDir = await makeDataDir(t)
  let server = await startServer({ env, dataDir })
  const site = (await createSite(server)).site_id
  await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
  // single events: a transaction each, so each one is followed by its commit marker
  for (let i = 0; i < 12; i++) await postEvents(server, [pageview(site, uid(`l${i}`), '/buy')])
  t.equal(await pollUntil(() => conversions(server, site), (n) => n === 12, 30_000, 100), 12)
  const rows = await pollUntil(() => status(server), (r) => r !== undefined && r.every((x) => x.lag === 0), 10_000, 100)
  t.ok(rows?.some((x) => x.end > 0), `records were appended: ${JSON.stringify(rows)}`)
  t.ok(rows?.every((x) => x.lag === 0 && x.offset === x.end), `no partition one short of its end: ${JSON.stringify(rows)}`)

  await server.stop()
  server = await startServer({ env, dataDir, t })
  t.equal(await pollUntil(() => conversions(server, site), (n) => n === 12, 30_000, 100), 12, 'nothing lost or counted twice after the restart')
  await postEvents(server, [pageview(site, uid('after'), '/buy')])
  t.equal(await pollUntil(() => conversions(server, site), (n) => n === 13, 30_000, 100), 13, 'and the next record is folded')
  const after = await pollUntil(() => status(server), (r) => r !== undefined && r.every((x) => x.lag === 0), 10_000, 100)
  t.ok(after?.every((x) => x.lag === 0), `lag 0 again: ${JSON.stringify(after)}`)
})
