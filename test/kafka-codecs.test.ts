// Kafka as operators run it: topics created beforehand with a topic-level compression.type, for
// every codec Kafka has. A node ingests and counts, a node started on a fresh data directory
// restores from the compressed changelog, and `goalpost replay` reads the compressed events topic.
// Half the codecs are written by Goalpost itself (GOALPOST_KAFKA_COMPRESSION, the broker keeps its
// batches), half by the broker (Goalpost writes none, the broker recompresses: Java's encoders).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Kafka, logLevel } from 'kafkajs'
import { clusterEnv } from './helpers/cluster.js'
import {
  createGoal, createSite, customEvent, getGoals, pageview, pollUntil, postEvents, startServer, uid,
  type EventBody, type GoalsAnswer,
} from './helpers/index.js'
import { runCli } from './helpers/cli.js'
import { rebuiltGoals } from './helpers/rebuilt.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'

const brokers = await sharedKafkaBrokers()
const PARTITIONS = 4

/** the codec each topic is created with, and what Goalpost itself writes */
const CASES = [
  { codec: 'gzip', writes: 'none' },
  { codec: 'snappy', writes: 'snappy' },
  { codec: 'lz4', writes: 'none' },
  { codec: 'zstd', writes: 'zstd' },
  { codec: 'lz4', writes: 'lz4' },
  { codec: 'snappy', writes: 'none' },
  { codec: 'zstd', writes: 'none' },
] as const

async function createTopics(prefix: string, codec: string): Promise<void> {
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    const compression = { name: 'compression.type', value: codec }
    const compact = { name: 'cleanup.policy', value: 'compact' }
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: `${prefix}.events`, numPartitions: PARTITIONS, configEntries: [compression] },
        { topic: `${prefix}.state`, numPartitions: PARTITIONS, configEntries: [compression, compact, { name: 'max.message.bytes', value: String(32 * 1024 * 1024) }] },
        { topic: `${prefix}.config`, numPartitions: 1, configEntries: [compression, compact] },
      ],
    })
  } finally {
    await admin.disconnect()
  }
}

const exact = (a: GoalsAnswer | undefined, sessions: number, conversions: number): boolean =>
  a !== undefined && a.total_sessions === sessions && a.goals[0]?.conversions === conversions

for (const { codec, writes } of CASES) {
  t.test(`topics with compression.type=${codec}, Goalpost writing ${writes}`, async (t) => {
    const env = clusterEnv(brokers, { GOALPOST_PARTITIONS: String(PARTITIONS), GOALPOST_KAFKA_COMPRESSION: writes, GOALPOST_SNAPSHOT_INTERVAL_MS: '200' })
    await createTopics(env.GOALPOST_KAFKA_PREFIX, codec)
    const a = await startServer({ t, env })
    t.notMatch(a.output(), /Topic creation errors/, 'existing topics are taken as they are, without an error line')
    // the config topic: a site and a goal written, read back and applied (no 503)
    const site = (await createSite(a)).site_id
    const goal = await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
    const events: EventBody[] = []
    for (let i = 0; i < 120; i++) {
      const s = uid(`s${i}`)
      events.push(pageview(site, s, '/'))
      if (i % 3 === 0) events.push(pageview(site, s, '/buy'))
      if (i % 5 === 0) events.push(customEvent(site, s, 'signup'))
    }
    t.equal((await postEvents(a, events)).status, 202)
    const read = async () => {
      const reply = await getGoals(a, site, 7)
      return reply.status === 200 ? (reply.json as GoalsAnswer) : undefined
    }
    const counted = await pollUntil(read, (x) => exact(x, 120, 40), 30_000, 100)
    t.ok(exact(counted, 120, 40), `the node counts every event: ${JSON.stringify(counted)}`)
    t.equal((await a.request('GET', '/readyz')).status, 200, 'ready')
    // the snapshot's changelog records reach the state topic before the node goes
    t.equal(await a.stop(), 0, 'stops cleanly')

    // a fresh data directory: everything comes back from the compressed changelog and events
    const b = await startServer({ t, env })
    const restored = await pollUntil(async () => {
      const reply = await getGoals(b, site, 7)
      return reply.status === 200 ? (reply.json as GoalsAnswer) : undefined
    }, (x) => exact(x, 120, 40), 30_000, 100)
    t.ok(exact(restored, 120, 40), `a new node restores the same answer: ${JSON.stringify(restored)}`)
    t.match(b.output(), /restored from the changelog/, 'from the changelog')
    t.equal(await b.stop(), 0)

    // replay reads the compressed events topic and rebuilds the same state
    const out = await mkdtemp(join(tmpdir(), 'goalpost-codec-replay-'))
    t.teardown(() => rm(out, { recursive: true, force: true }))
    const ran = await runCli(['replay', '--out', out], env)
    t.equal(ran.code, 0, `goalpost replay exits 0\n${ran.stderr}`)
    t.match(ran.stdout, /replayed \d+ records/)
    const rebuilt = await rebuiltGoals(t, out, PARTITIONS, site, [goal])
    t.ok(exact(rebuilt, 120, 40), `replay rebuilds the same answer: ${JSON.stringify(rebuilt)}`)
  })
}
