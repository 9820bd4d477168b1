// Kafka mode through HTTP: the broker hangs (SIGSTOP) in the middle of ingestion and recovers
// (SIGCONT). Clients hear 503 + Retry-After meanwhile, never a hang; afterwards every acknowledged
// event is counted exactly once and no refused event is ever counted. A private broker, so that
// pausing it disturbs no other test file.
import t from 'tap'
import { createGoal, createSite, getGoals, pollUntil, postEvent, sleep, startServer, type GoalsAnswer } from './helpers/index.js'
import { startKafkaBroker } from './helpers/kafka-broker.js'
import { KafkaLog, readEvent } from '../dist/log/index.js'

t.test('a hung broker: 503 while it hangs, exact counts after', async (t) => {
  const broker = await startKafkaBroker()
  t.teardown(() => broker.stop())
  const server = await startServer({
    t,
    env: {
      GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: broker.brokers, GOALPOST_KAFKA_PREFIX: 'pause',
      GOALPOST_KAFKA_PRODUCE_TIMEOUT_MS: '2000', GOALPOST_EXACT_THRESHOLD: '100000',
    },
  })
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/done' })

  const acked: string[] = []
  const refused: string[] = []
  const other: string[] = []
  let slowest = 0
  let sending = true
  let n = 0
  const sender = async () => {
    while (sending) {
      const session = `p${n++}`
      const started = Date.now()
      const reply = await postEvent(server, { type: 'pageview', site_id: site, session_id: session, path: '/done' })
      slowest = Math.max(slowest, Date.now() - started)
      if (reply.status === 202) acked.push(session)
      else if (reply.status === 503 && reply.headers.get('retry-after')) refused.push(session)
      else other.push(`${session}: ${reply.status} ${reply.text}`)
      if (reply.status !== 202) await sleep(100)
    }
  }
  const senders = Array.from({ length: 8 }, sender)
  await pollUntil(async () => acked.length, (k) => k >= 50, 20_000, 50)
  broker.pause()
  const refusedBefore = refused.length
  await pollUntil(async () => refused.length - refusedBefore, (k) => k >= 8, 20_000, 100)
  const ready = await server.request('GET', '/readyz')
  broker.resume()
  const ackedAtResume = acked.length
  await pollUntil(async () => acked.length - ackedAtResume, (k) => k >= 50, 60_000, 100)
  sending = false
  await Promise.all(senders)

  t.ok(refused.length > refusedBefore, `${refused.length - refusedBefore} events refused with 503 + Retry-After while the broker hung`)
  t.equal(ready.status, 503, '/readyz says 503 while appends fail')
  t.ok(slowest < 20_000, `no request waited long (slowest ${slowest} ms)`)
  t.same(other, [], 'every answer was 202 or 503')
  const answer = await pollUntil(async () => (await getGoals(server, site, 1)).json as GoalsAnswer,
    (a) => a.total_sessions >= acked.length, 30_000, 200)
  t.ok(answer.total_sessions >= acked.length, `every acknowledged session counted (${acked.length})`)
  t.equal(answer.total_sessions, acked.length, 'nothing refused counted')
  t.equal(answer.goals.find((g) => g.id === goal.id)?.conversions, answer.total_sessions, 'each counted session converted once')
  // what any consumer will ever read (read_committed) is exactly what was acknowledged
  const log = await KafkaLog.open({ brokers: [broker.brokers], nodeId: 'pause-reader' })
  t.teardown(() => log.close())
  const visible: string[] = []
  for (let p = 0; p < log.partitionsOf('pause.events'); p++) {
    let from = await log.beginOffset('pause.events', p)
    const end = await log.endOffset('pause.events', p)
    while (from < end) {
      const records = await log.read('pause.events', p, from, 5000)
      if (records.length === 0) break
      for (const r of records) visible.push(readEvent(r.value).session_id)
      from = records[records.length - 1]!.offset + 1
    }
  }
  const seen = new Map<string, number>()
  for (const v of visible) seen.set(v, (seen.get(v) ?? 0) + 1)
  t.same(acked.filter((s) => seen.get(s) !== 1), [], 'the topic holds every acknowledged event exactly once')
  t.same(refused.filter((s) => seen.has(s)), [], 'and no refused one')
})
