/**
 * The broker hangs (SIGSTOP), then recovers (SIGCONT): in the middle of a stream of appends, and at
 * the one moment that matters most, right after a commit request left. A private broker, so that
 * pausing it disturbs no other test file of the run. A hang leaves several aborted transactions
 * interleaved in each partition, aborted in any order: their records must stay unreadable.
 */
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { type KafkaBroker, startKafkaBroker } from '../../../test/helpers/kafka-broker.js'
import { waitFor } from '../contract-group.js'
import { LogError } from '../errors.js'
import { KafkaLog } from './index.js'

const PRODUCE_TIMEOUT_MS = 2000
const OUTCOME_TIMEOUT_MS = 30_000
const PARTITIONS = 4
/** rejections may come a little after the deadline: timers, event-loop turns, a loaded machine */
const SLACK_MS = 1000

interface Attempt {
  values: string[]
  started: number
  ms?: number
  /** 'acked', or the error's message */
  outcome?: string
}

let broker: KafkaBroker
t.before(async () => {
  broker = await startKafkaBroker()
})
t.teardown(() => broker?.stop())

t.test('a hung broker: appends are refused in time, nothing refused is ever readable, everything acknowledged is, once', async (t) => {
  const log = await KafkaLog.open({ brokers: [broker.brokers], nodeId: 'hang-test', produceTimeoutMs: PRODUCE_TIMEOUT_MS, outcomeTimeoutMs: OUTCOME_TIMEOUT_MS })
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
  // an append already under way when the broker stopped may have sent its commit: its answer
  // waits for the outcome (transaction-slot.ts), within the outcome bound; any later one is
  // refused within the produce timeout
  const slow = refused.filter((a) => (a.ms ?? 0) > (a.started < pausedAt ? PRODUCE_TIMEOUT_MS + OUTCOME_TIMEOUT_MS : PRODUCE_TIMEOUT_MS) + SLACK_MS)
  t.same(slow.map((a) => a.ms), [], `every refusal within the produce timeout (${PRODUCE_TIMEOUT_MS} ms + ${SLACK_MS} ms), or the outcome bound for appends under way at the hang`)
  const lost = acked.flatMap((a) => a.values).filter((v) => stored.get(v) !== 1)
  t.same(lost, [], 'every acknowledged record is readable exactly once')
  const leaked = refused.flatMap((a) => a.values).filter((v) => stored.has(v))
  t.same(leaked, [], 'no record of a refused append is ever readable')
  const partial = attempts.filter((a) => a.outcome === undefined)
  t.same(partial, [], 'every append was answered')
  t.equal(stored.size, acked.length * 4, 'nothing else is stored')
})

/** Kafka's EndTxn request: a transaction's commit (or abort) */
const END_TXN = 26

/** A socket factory that runs `onRequest(apiKey)` just after each request has gone to the kernel. */
function watchingRequests(onRequest: (apiKey: number) => void) {
  return ({ host, port, onConnect }: { host: string; port: number; onConnect: () => void }): Socket => {
    const socket = connect({ host, port }, onConnect)
    const write = socket.write.bind(socket) as (chunk: Buffer, encoding?: BufferEncoding) => boolean
    socket.write = ((chunk: Buffer, encoding?: BufferEncoding) => {
      const written = write(chunk, encoding)
      if (Buffer.isBuffer(chunk) && chunk.length >= 6) onRequest(chunk.readInt16BE(4))
      return written
    }) as typeof socket.write
    return socket
  }
}

t.test('the broker hangs right after a commit request left: the answer waits for the outcome, and tells the truth', async (t) => {
  let armed = false
  let pausedAt = 0
  const log = await KafkaLog.open({
    brokers: [broker.brokers],
    nodeId: 'commit-window-test',
    produceTimeoutMs: PRODUCE_TIMEOUT_MS,
    outcomeTimeoutMs: 30_000,
    producers: 1,
    socketFactory: watchingRequests((apiKey) => {
      if (armed && apiKey === END_TXN) {
        armed = false
        broker.pause()
        pausedAt = Date.now()
      }
    }),
  })
  t.teardown(() => log.close())
  const topic = 'commit-window.events'
  await log.createTopic({ name: topic, partitions: PARTITIONS })
  const values = ['a', 'b', 'c', 'd', 'e', 'f'].map((v) => `window-${v}`)
  armed = true
  const started = Date.now()
  const answer = log.append(topic, values.map((v) => ({ key: v, value: Buffer.from(v), timestamp: Date.now() })))
    .then(() => 'acked', (err: unknown) => (err instanceof LogError ? err.code : String(err)))
  await waitFor('the hang at the commit', () => pausedAt > 0, 10_000)
  // hold the broker past the produce deadline: a plain timeout would answer now
  await waitFor('the produce deadline to pass', () => Date.now() > started + PRODUCE_TIMEOUT_MS + 1000, 10_000)
  broker.resume()
  const outcome = await answer
  const ms = Date.now() - started
  const stored: string[] = []
  for (let p = 0; p < PARTITIONS; p++) stored.push(...(await log.read(topic, p, 0, 1000)).map((r) => r.value.toString()))
  t.comment(`outcome ${outcome} after ${ms} ms; ${stored.length} of ${values.length} records readable`)
  t.ok(ms > PRODUCE_TIMEOUT_MS + 1000, 'no answer while the outcome could not be known')
  t.ok(outcome === 'acked' || outcome === 'LOG_WRITE_FAILED', `the outcome was learnt (${outcome})`)
  t.same(stored.sort(), outcome === 'acked' ? [...values].sort() : [], 'what is readable matches the answer, all or nothing')
  await log.append(topic, [{ key: 'after', value: Buffer.from('after'), timestamp: Date.now() }])
  t.ok(log.healthy(), 'appends work again')
})
