// Batches other producers write into the events topic: compressed with any codec, they are read
// like Goalpost's own, on every partition. A batch nobody can read (corrupt on the broker's disk)
// stops its own partition only, where the operator sees it — GET /api/status names the reason,
// topic, partition and offset, /readyz answers 503, the metrics count it, queries say "stopped" —
// while ingest goes on; with GOALPOST_KAFKA_UNREADABLE_BATCH=dead-letter the batch is set aside
// and folding goes on past it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { CompressionTypes, Kafka, logLevel, type Message } from 'kafkajs'
// every codec in kafkajs' registry of this process too: the foreign producer writes them all
import '../dist/log/kafka/codecs.js'
import { loggedRecordEncoder } from '../dist/cli/kafka-record.js'
import { kafkaPartitionOf } from '../dist/log/kafka/partitioner.js'
import { clusterEnv } from './helpers/cluster.js'
import {
  createGoal, createSite, getGoals, pageview, pollUntil, postEvent, postEvents, startExpectingExit, startServer, uid, type GoalsAnswer, type Server,
} from './helpers/index.js'
import { runCli } from './helpers/cli.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { brokerLogDir, corruptBatch, firstDataBatch } from './helpers/kafka-segments.js'

const brokers = await sharedKafkaBrokers()
const PARTITIONS = 4
/** the partition that gets the corrupt batch */
const BAD = 2

interface StatusRow {
  partition: number
  offset: number
  end: number
  lag: number
  folding?: string
  stopped?: { reason: string; topic: string; partition: number; offset: number; since: string } | null
}

async function status(server: Server): Promise<StatusRow[] | undefined> {
  const reply = await server.admin('GET', '/api/status')
  return reply.status === 200 ? (reply.json as { partitions: StatusRow[] }).partitions : undefined
}

async function goals(server: Server, site: string): Promise<GoalsAnswer | undefined> {
  const reply = await getGoals(server, site, 7)
  return reply.status === 200 ? (reply.json as GoalsAnswer) : undefined
}

async function metric(server: Server, name: string): Promise<number> {
  const text = (await server.request('GET', '/metrics')).text
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? Number.NaN : Number(line.split(' ')[1])
}

t.test('foreign batches of every codec are read; a corrupt one stops its partition only, or is set aside', async (t) => {
  const env = clusterEnv(brokers, { GOALPOST_PARTITIONS: String(PARTITIONS), GOALPOST_SNAPSHOT_INTERVAL_MS: '200' })
  const topic = `${env.GOALPOST_KAFKA_PREFIX}.events`
  const a = await startServer({ t, env })
  const site = (await createSite(a)).site_id
  await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
  const encode = await loggedRecordEncoder([site], 90)
  const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING })
  const producer = kafka.producer()
  await producer.connect()
  t.teardown(() => producer.disconnect())
  /** the records of `sessions` sessions, each a /buy pageview, in `partition` (every one: undefined) */
  const sessionsIn = (n: number, partition?: number): Message[] => {
    const out: Message[] = []
    while (out.length < n) {
      const r = encode(JSON.stringify(pageview(site, uid('f'), '/buy')))
      const p = kafkaPartitionOf(r.key, PARTITIONS)
      if (partition === undefined || p === partition) out.push({ ...r, partition: p })
    }
    return out
  }

  // one batch per codec from another producer, over every partition
  const codecs = [CompressionTypes.GZIP, CompressionTypes.Snappy, CompressionTypes.LZ4, CompressionTypes.ZSTD]
  for (const compression of codecs) await producer.send({ topic, compression, acks: -1, messages: sessionsIn(10) })
  let sessions = 40
  const counted = await pollUntil(() => goals(a, site), (g) => g?.total_sessions === sessions && g.goals[0]?.conversions === sessions, 30_000, 100)
  t.equal(counted?.total_sessions, sessions, 'every foreign batch is folded, on every partition')
  t.equal(await a.stop(), 0)

  // while the node is down: a gzip batch on one partition, corrupted on the broker's disk, then
  // readable records after it on that partition and on every other one
  const [sent] = await producer.send({ topic, compression: CompressionTypes.GZIP, acks: -1, messages: sessionsIn(20, BAD) })
  const badOffset = Number(sent.baseOffset)
  await corruptBatch(brokerLogDir(brokers[0]), topic, BAD, badOffset)
  for (let p = 0; p < PARTITIONS; p++) await producer.send({ topic, acks: -1, messages: sessionsIn(5, p) })
  const readable = sessions + 5 * PARTITIONS

  const b = await startServer({ t, env, dataDir: a.dataDir, ready: false })
  const rows = await pollUntil(() => status(b), (r) => r !== undefined && r.find((x) => x.partition === BAD)?.folding === 'stopped' &&
    r.filter((x) => x.partition !== BAD).every((x) => x.folding === 'running' && x.lag === 0), 30_000, 200)
  const bad = rows?.find((x) => x.partition === BAD)
  t.equal(bad?.folding, 'stopped', `the partition with the corrupt batch is stopped: ${JSON.stringify(rows)}`)
  t.match(bad?.stopped, { topic, partition: BAD, offset: badOffset, reason: /cannot be read.*gzip/ }, 'named: reason, topic, partition, offset')
  t.ok((bad?.lag ?? 0) > 0, 'and how far behind it is')
  for (const row of rows?.filter((x) => x.partition !== BAD) ?? []) {
    t.match(row, { folding: 'running', stopped: null, lag: 0 }, `partition ${row.partition} folds on`)
  }
  const ready = await b.request('GET', '/readyz')
  t.equal(ready.status, 503, '/readyz: not ready')
  t.match((ready.json as { error: string }).error, new RegExp(`partition ${BAD} is stopped at offset ${badOffset} of ${topic.replace('.', '\\.')}`))
  t.equal(await metric(b, 'goalpost_stream_partitions_stopped'), 1, 'a metric counts the stopped partition')
  t.ok(await metric(b, 'goalpost_stream_stopped_lag_records') > 0, 'and how far behind it stands')
  t.match(b.output(), new RegExp(`${topic.replace('.', '\\.')} partition ${BAD}, offsets ${badOffset}-\\d+ \\(gzip\\)`), 'the log names topic, partition, offsets and codec')
  const query = await getGoals(b, site, 7)
  t.equal(query.status, 503, 'no partial answer')
  t.match((query.json as { error: string }).error, new RegExp(`partition ${BAD} is stopped`), 'the 503 says stopped')
  t.notMatch((query.json as { error: string }).error, /rebalancing/, 'not "rebalancing"')
  t.equal((await postEvent(b, pageview(site, uid('late'), '/'))).status, 202, 'ingest goes on: the log is durable')
  t.equal(await b.stop(), 0)

  // the operator chooses to set such batches aside: the partition goes on past it
  const c = await startServer({ t, env: { ...env, GOALPOST_KAFKA_UNREADABLE_BATCH: 'dead-letter' }, dataDir: a.dataDir })
  sessions = readable + 1
  const after = await pollUntil(() => goals(c, site), (g) => g?.total_sessions === sessions, 30_000, 100)
  t.equal(after?.total_sessions, sessions, 'everything but the unreadable batch is counted')
  t.equal(after?.goals[0]?.conversions, readable, 'its conversions are not')
  t.ok(await metric(c, 'goalpost_stream_dead_letters') >= 20, 'the batch is in the dead-letter store')
  t.equal(await metric(c, 'goalpost_stream_partitions_stopped'), 0)
  t.equal((await c.request('GET', '/readyz')).status, 200)
  const running = await status(c)
  t.ok(running?.every((x) => x.folding === 'running' && x.stopped === null), 'every partition runs')
})

t.test('a restore, a config read and a replay that meet an unreadable batch name the topic, partition, offsets, codec and error', async (t) => {
  const env = clusterEnv(brokers, { GOALPOST_PARTITIONS: '1', GOALPOST_KAFKA_COMPRESSION: 'gzip', GOALPOST_SNAPSHOT_INTERVAL_MS: '200' })
  const prefix = env.GOALPOST_KAFKA_PREFIX
  const a = await startServer({ t, env })
  const site = (await createSite(a)).site_id
  await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/buy' })
  t.equal((await postEvents(a, Array.from({ length: 30 }, (_, i) => pageview(site, uid(`r${i}`), '/buy')))).status, 202)
  const counted = await pollUntil(() => goals(a, site), (g) => g?.total_sessions === 30, 30_000, 100)
  t.equal(counted?.total_sessions, 30)
  t.equal(await a.stop(), 0, 'its last snapshot is in the changelog')

  const logDir = brokerLogDir(brokers[0])
  const stateOffset = firstDataBatch(logDir, `${prefix}.state`, 0)
  await corruptBatch(logDir, `${prefix}.state`, 0, stateOffset)
  const restore = await startExpectingExit({ t, env }, 60_000)
  t.equal(restore.code, 1, 'a node that cannot restore its partition does not start')
  t.match(restore.stderr, new RegExp(`${prefix}\\.state partition 0, offsets ${stateOffset}-\\d+ \\(gzip\\): `), `the restore names the state topic's batch\n${restore.stderr}`)
  t.notMatch(restore.stderr, /joining group .*timed out/, 'not a join timeout')

  const eventsOffset = firstDataBatch(logDir, `${prefix}.events`, 0)
  await corruptBatch(logDir, `${prefix}.events`, 0, eventsOffset)
  const out = await mkdtemp(join(tmpdir(), 'goalpost-unreadable-replay-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const ran = await runCli(['replay', '--out', out], env)
  t.equal(ran.code, 1, 'replay fails')
  t.match(ran.stderr, new RegExp(`${prefix}\\.events partition 0, offsets ${eventsOffset}-\\d+ \\(gzip\\): `), `replay names the events topic's batch\n${ran.stderr}`)

  const configOffset = firstDataBatch(logDir, `${prefix}.config`, 0)
  await corruptBatch(logDir, `${prefix}.config`, 0, configOffset)
  const config = await startExpectingExit({ t, env }, 60_000)
  t.equal(config.code, 1, 'a node that cannot read its configuration does not start')
  t.match(config.stderr, new RegExp(`${prefix}\\.config partition 0, offsets ${configOffset}-\\d+ \\(gzip\\): `), `the config read names the config topic's batch\n${config.stderr}`)
})
