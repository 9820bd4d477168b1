/**
 * The broker hangs (SIGSTOP) in the middle of a stream of appends, then recovers (SIGCONT). A
 * private broker, so that pausing it disturbs no other test file of the run.
 */
import t from 'tap'
import { startKafkaBroker } from '../../../test/helpers/kafka-broker.js'
import { waitFor } from '../contract-group.js'
import { LogError } from '../errors.js'
import { KafkaLog } from './index.js'

const PRODUCE_TIMEOUT_MS = 2000
const PARTITIONS = 4
/** rejections may come a little after the deadline: timers, event-loop turns, a loaded machine */
const SLACK_MS = 1000

interface Attempt {
  values: string[]
  started: number
  ms?: number
  outcome?: 'acked' | string
}

t.test('a hung broker: appends are refused in time, nothing refused is ever readable, everything acknowledged is, once', async (t) => {
  const broker = await startKafkaBroker()
  t.teardown(() => broker.stop())
  const log = await KafkaLog.open({ brokers: [broker.brokers], nodeId: 'hang-test', produceTimeoutMs: PRODUCE_TIMEOUT_MS, outcomeTimeoutMs: 30_000 })
  t.teardown(() => log.close())
  const topic = 'hang.events'
  await log.createTopic({ name: topic, partitions: PARTITIONS })

  const attempts: Attempt[] = []
  let writing = true
  let n = 0
  // several writers, each append a batch of 4 records with different keys: across partitions
  const writer = async (w: number): Promise<void> => {
    while (writing) {
      const values = Array.from({ length: 4 }, () => `w${w}-${n++}`)
      const attempt: Attempt = { values, started: Date.now() }
      attempts.push(attempt)
      try {
        await log.append(topic, values.map((v, i) => ({ key: `site:${v}:${i}`, value: Buffer.from(v), timestamp: Date.now() })))
        attempt.outcome = 'acked'
      } catch (err) {
        attempt.outcome = err instanceof LogError ? err.code : String(err)
        // as ingest does: while the log is unhealthy, back off instead of spinning
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      attempt.ms = Date.now() - attempt.started
    }
  }
  const writers = Array.from({ length: 16 }, (_, w) => writer(w))

  await waitFor('appends before the hang', () => attempts.filter((a) => a.outcome === 'acked').length >= 200)
  broker.pause()
  const pausedAt = Date.now()
  await waitFor('the log to notice', () => !log.healthy(), PRODUCE_TIMEOUT_MS + SLACK_MS + 5000)
  await waitFor('refusals during the hang', () => attempts.filter((a) => a.started > pausedAt && a.outcome !== undefined && a.outcome !== 'acked').length >= 16)
  const hangMs = Date.now() - pausedAt
  broker.resume()
  const resumedAt = Date.now()
  await waitFor('health again', () => log.healthy(), 30_000)
  await waitFor('appends after the hang', () => attempts.filter((a) => a.started > resumedAt && a.outcome === 'acked').length >= 100, 30_000)
  writing = false
  await Promise.all(writers)

  const stored = new Map<string, number>()
  for (let p = 0; p < PARTITIONS; p++) {
    for (const record of await log.read(topic, p, 0, 1_000_000)) {
      const v = record.value.toString()
      stored.set(v, (stored.get(v) ?? 0) + 1)
    }
  }
  const acked = attempts.filter((a) => a.outcome === 'acked')
  const refused = attempts.filter((a) => a.outcome !== 'acked')
  const unknown = refused.filter((a) => a.outcome === 'LOG_OUTCOME_UNKNOWN')
  t.comment(`hang ${hangMs} ms; ${acked.length} appends acknowledged, ${refused.length} refused (${unknown.length} with an unknown outcome)`)

  t.ok(refused.length > 0, 'appends were refused during the hang')
  t.same([...new Set(refused.map((a) => a.outcome))].filter((c) => c !== 'LOG_UNAVAILABLE' && c !== 'LOG_WRITE_FAILED' && c !== 'LOG_OUTCOME_UNKNOWN'), [],
    'refusals carry the log\'s retryable codes')
  t.equal(unknown.length, 0, 'the broker came back within the outcome bound: every commit outcome was learnt')
  const slow = refused.filter((a) => (a.ms ?? 0) > PRODUCE_TIMEOUT_MS + SLACK_MS)
  t.same(slow.map((a) => a.ms), [], `every refusal within the produce timeout (${PRODUCE_TIMEOUT_MS} ms + ${SLACK_MS} ms)`)
  const lost = acked.flatMap((a) => a.values).filter((v) => stored.get(v) !== 1)
  t.same(lost, [], 'every acknowledged record is readable exactly once')
  const leaked = refused.flatMap((a) => a.values).filter((v) => stored.has(v))
  t.same(leaked, [], 'no record of a refused append is ever readable')
  const partial = attempts.filter((a) => a.outcome === undefined)
  t.same(partial, [], 'every append was answered')
  t.equal(stored.size, acked.length * 4, 'nothing else is stored')
})
