// `goalpost replay` on the Kafka log: the state it rebuilds from the events topic alone answers
// exactly what the live service answered, and never counts an event of an aborted transaction.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka, logLevel, Partitioners } from 'kafkajs'
import t, { type Test } from 'tap'
import { createGoal, createSite, customEvent, pageview, postEvents, settledGoals, startServer, uid, type EventBody } from './helpers/index.js'
import { runCli } from './helpers/cli.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { rebuiltGoals } from './helpers/rebuilt.js'
import { loggedRecordEncoder } from '../dist/cli/kafka-record.js'

async function replayInto(t: Test, env: Record<string, string>): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), 'goalpost-replay-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const ran = await runCli(['replay', '--out', out], env)
  t.equal(ran.code, 0, `replay exits 0\n${ran.stderr}`)
  t.match(ran.stdout, /replayed \d+ records .* events\/s/, 'it reports the records and the rate')
  return out
}

const kafkaEnv = async (): Promise<Record<string, string>> => ({
  GOALPOST_LOG: 'kafka',
  GOALPOST_KAFKA_BROKERS: (await sharedKafkaBrokers()).join(','),
  GOALPOST_KAFKA_PREFIX: `replay-${randomBytes(4).toString('hex')}`,
  GOALPOST_PARTITIONS: '3',
  GOALPOST_EXACT_THRESHOLD: '100000',
})

/** A Kafka-mode service on its own topics, with a site, a page goal (/buy/**) and an event goal (signup). */
async function serviceWithGoals(t: Test) {
  const env = await kafkaEnv()
  const server = await startServer({ t, env })
  const site = (await createSite(server)).site_id
  const goals = [
    await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/buy/**' }),
    await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' }),
  ]
  return { env, server, site, goals }
}

t.test('replay equals live', async (t) => {
  const { env, server, site, goals } = await serviceWithGoals(t)
  const events: EventBody[] = []
  for (let i = 0; i < 400; i++) {
    const s = uid('r')
    events.push(pageview(site, s, '/'))
    if (i % 3 === 0) events.push(pageview(site, s, `/buy/${i % 7}/done`))
    if (i % 5 === 0) events.push(customEvent(site, s, 'signup'))
  }
  for (let i = 0; i < events.length; i += 250) t.equal((await postEvents(server, events.slice(i, i + 250))).status, 202)
  const live = await settledGoals(server, site, 7, (a) => a.total_sessions === 400)
  t.equal(live.total_sessions, 400)

  const out = await replayInto(t, env)
  const rebuilt = await rebuiltGoals(t, out, 3, site, goals)
  t.equal(rebuilt.total_sessions, live.total_sessions, 'the same sessions')
  t.same(rebuilt.goals.map((g) => g.conversions), live.goals.map((g) => g.conversions), 'the same conversions')

  const again = await runCli(['replay', '--out', out], env)
  t.equal(again.code, 1, 'a directory that holds state is refused')
  t.match(again.stderr, /already holds state/)
})

t.test('replay folds exactly the committed events: aborted transactions between them are never counted', async (t) => {
  const { env, server, site, goals } = await serviceWithGoals(t)
  const committed = (first: number, n: number): EventBody[] => Array.from({ length: n }, (_, k) => first + k).flatMap((i) => {
    const s = `kept-${i}`
    return [pageview(site, s, '/'), ...(i % 3 === 0 ? [pageview(site, s, '/buy/1')] : []), ...(i % 5 === 0 ? [customEvent(site, s, 'signup')] : [])]
  })
  // events of sessions of their own, every one converting both goals: counted if ever folded
  const encode = await loggedRecordEncoder([site], 90)
  const doomed = (first: number, n: number) => Array.from({ length: n }, (_, k) => `doomed-${first + k}`)
    .flatMap((s) => [pageview(site, s, '/buy/2'), customEvent(site, s, 'signup')])
    .map((e) => encode(JSON.stringify(e)))

  const kafka = new Kafka({ brokers: env.GOALPOST_KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING })
  const producer = kafka.producer({ transactionalId: `${env.GOALPOST_KAFKA_PREFIX}-doomed`, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  t.teardown(() => producer.disconnect())
  const topic = `${env.GOALPOST_KAFKA_PREFIX}.events`

  t.equal((await postEvents(server, committed(0, 40))).status, 202)
  // an aborted transaction open while the service commits its own: their batches interleave
  for (let round = 0; round < 3; round++) {
    const txn = await producer.transaction()
    await txn.send({ topic, acks: -1, messages: doomed(round * 100, 30) })
    t.equal((await postEvents(server, committed(40 + round * 40, 40))).status, 202)
    await txn.send({ topic, acks: -1, messages: doomed(round * 100 + 50, 30) })
    await txn.abort()
  }
  const sessions = 160
  const expected = [Math.ceil(sessions / 3), Math.ceil(sessions / 5)]
  const live = await settledGoals(server, site, 7, (a) => a.total_sessions === sessions)
  t.equal(live.total_sessions, sessions, 'the live fold counts only the committed sessions')
  t.same(live.goals.map((g) => g.conversions), expected)

  const out = await replayInto(t, env)
  const rebuilt = await rebuiltGoals(t, out, 3, site, goals)
  t.equal(rebuilt.total_sessions, sessions, 'the replay counts only the committed sessions')
  t.same(rebuilt.goals.map((g) => g.conversions), expected, 'and only their conversions')
})
