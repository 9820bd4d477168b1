// `goalpost replay` on the Kafka log: the state it rebuilds from the events topic alone answers
// exactly what the live service answered.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createGoal, createSite, customEvent, pageview, postEvents, settledGoals, startServer, uid, type EventBody, type GoalsAnswer } from './helpers/index.js'
import { runCli } from './helpers/cli.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { StateStore } from '../dist/store/index.js'
import { PartitionState, goalList } from '../dist/stream/index.js'
import { initHash } from '../dist/sketch/index.js'

t.test('replay equals live', async (t) => {
  const env = {
    GOALPOST_LOG: 'kafka',
    GOALPOST_KAFKA_BROKERS: (await sharedKafkaBrokers()).join(','),
    GOALPOST_KAFKA_PREFIX: `replay-${randomBytes(4).toString('hex')}`,
    GOALPOST_PARTITIONS: '3',
    GOALPOST_EXACT_THRESHOLD: '100000',
  }
  const server = await startServer({ t, env })
  const site = (await createSite(server)).site_id
  const goals = [
    await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/buy/**' }),
    await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' }),
  ]
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

  const out = await mkdtemp(join(tmpdir(), 'goalpost-replay-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  const ran = await runCli(['replay', '--out', out], env)
  t.equal(ran.code, 0, `replay exits 0\n${ran.stderr}`)
  t.match(ran.stdout, /replayed \d+ records .* events\/s/, 'it reports the records and the rate')

  await initHash()
  const store = await StateStore.open(join(out, 'state'))
  t.teardown(() => store.close())
  const parts = []
  for (let p = 0; p < 3; p++) {
    const state = new PartitionState(p, 100_000)
    await store.loadPartition(state)
    parts.push(state)
  }
  const siteRecord = { site_id: site, domain: null, timezone: 'UTC', created_at: '' }
  const rebuilt = goalList(parts, siteRecord, goals, 7) as GoalsAnswer
  t.equal(rebuilt.total_sessions, live.total_sessions, 'the same sessions')
  t.same(rebuilt.goals.map((g) => g.conversions), live.goals.map((g) => g.conversions), 'the same conversions')

  const again = await runCli(['replay', '--out', out], env)
  t.equal(again.code, 1, 'a directory that holds state is refused')
  t.match(again.stderr, /already holds state/)
})
