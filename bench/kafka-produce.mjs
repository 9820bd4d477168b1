/**
 * KafkaLog.append against raw kafkajs on the same broker, in the same run: the adapter's overhead
 * over its client, and the cost of transactions. 64 concurrent senders, one event per append,
 * acks=all throughout:
 *   raw-send        one producer.send per event on an idempotent producer (no grouping, no transactions)
 *   raw-grouped     4 idempotent producers, each sending whatever the senders queued as one sendBatch
 *   raw-txn         the same groups, each in one transaction (what KafkaLog does, without the rest)
 *   kafka-log       KafkaLog.append (validation, deadlines, ordered sends, visibility wait)
 * Run after a build: `node bench/kafka-produce.mjs [seconds per case] [rounds]`; raw-txn and kafka-log
 * alternate for `rounds` (default 3) and report medians. Uses GOALPOST_KAFKA_BROKERS,
 * else starts a private broker from the test harness (Java and Maven needed).
 */
import { Kafka, logLevel } from 'kafkajs'
import { KafkaLog } from '../dist/log/index.js'
import { machine } from './lib/machine.mjs'

const SECONDS = Number(process.argv[2] ?? 10)
const ROUNDS = Number(process.argv[3] ?? 3)
const SENDERS = 64
const PRODUCERS = 4
const PARTITIONS = 8
const VALUE = Buffer.from(JSON.stringify({ type: 'pageview', site_id: 'example.com', session_id: 's'.repeat(20), path: '/'.padEnd(200, 'x'), ts: Date.now() }))

const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/** `SENDERS` loops, each awaiting `send(i)` one event at a time, for SECONDS. */
async function load(send) {
  const stopAt = performance.now() + SECONDS * 1000
  const latencies = []
  let n = 0
  const sender = async () => {
    while (performance.now() < stopAt) {
      const start = performance.now()
      await send(n++)
      latencies.push(performance.now() - start)
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: SENDERS }, sender))
  const elapsed = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  return { perSec: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
}

const message = (i) => ({ key: `example.com:s${i % 5000}`, value: VALUE, timestamp: String(Date.now()) })

/** Minimal group commit on raw kafkajs: producers take everything queued as one send. */
function groupCommit(producers, topic, transactional) {
  let queue = []
  const idle = [...producers]
  const pump = () => {
    while (idle.length > 0 && queue.length > 0) {
      const producer = idle.shift() // longest idle first, as KafkaLog does
      const group = queue
      queue = []
      void (async () => {
        const topicMessages = [{ topic, messages: group.map((g) => g.message) }]
        try {
          if (transactional) {
            const txn = await producer.transaction()
            await txn.sendBatch({ topicMessages, acks: -1 })
            await txn.commit()
          } else {
            await producer.sendBatch({ topicMessages, acks: -1 })
          }
          for (const g of group) g.resolve()
        } catch (err) {
          for (const g of group) g.reject(err)
        }
        idle.push(producer)
        pump()
      })()
    }
  }
  return (i) => new Promise((resolve, reject) => {
    queue.push({ message: message(i), resolve, reject })
    pump()
  })
}

async function main() {
  let brokers = process.env.GOALPOST_KAFKA_BROKERS?.split(',')
  let broker
  if (!brokers) {
    process.env.TS_NODE_TRANSPILE_ONLY ??= '1' // the harness is TypeScript: load it, skip type checks
    await import('@tapjs/typescript/import')
    const { startKafkaBroker } = await import('../test/helpers/kafka-broker.ts')
    broker = await startKafkaBroker()
    brokers = [broker.brokers]
  }
  const kafka = new Kafka({ clientId: 'bench', brokers, logLevel: logLevel.NOTHING, retry: { initialRetryTime: 20, maxRetryTime: 1000, retries: 8 } })
  const admin = kafka.admin()
  await admin.connect()
  const run = Date.now().toString(36)
  const topicOf = async (name) => {
    const topic = `bench-${run}-${name}`
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true })
    return topic
  }
  const producers = async (n, transactional) => {
    const list = []
    for (let i = 0; i < n; i++) {
      const p = kafka.producer(transactional
        ? { transactionalId: `bench-${run}-${transactional}-${i}`, idempotent: true, maxInFlightRequests: 1 }
        : { idempotent: true, maxInFlightRequests: 1 })
      await p.connect()
      list.push(p)
    }
    return list
  }
  const results = []
  const measure = async (name, send, close) => {
    await load(send) // warm-up pass, discarded: JIT on both sides, the transaction log, metadata
    const r = await load(send)
    results.push({ name, ...r })
    process.stderr.write(`${name}: ${Math.round(r.perSec)} events/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms\n`)
    await close()
  }

  {
    const topic = await topicOf('send')
    const [p] = await producers(1, false)
    await measure('raw-send', (i) => p.send({ topic, acks: -1, messages: [message(i)] }), () => p.disconnect())
  }
  {
    const topic = await topicOf('grouped')
    const list = await producers(PRODUCERS, false)
    await measure('raw-grouped', groupCommit(list, topic, false), () => Promise.all(list.map((p) => p.disconnect())))
  }
  {
    // the two cases compared alternate, several rounds, medians: this machine is shared and noisy
    const topic = await topicOf('txn')
    const list = await producers(PRODUCERS, 'txn')
    const log = await KafkaLog.open({ brokers, nodeId: `bench-${run}`, producers: PRODUCERS })
    const logTopic = `bench-${run}-log`
    await log.createTopic({ name: logTopic, partitions: PARTITIONS })
    const record = (i) => ({ key: `example.com:s${i % 5000}`, value: VALUE, timestamp: Date.now() })
    const rawTxn = groupCommit(list, topic, true)
    const viaLog = (i) => log.append(logTopic, [record(i)])
    await load(rawTxn)
    await load(viaLog) // warm-up passes, discarded
    const rounds = { 'raw-txn': [], 'kafka-log': [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, send] of [['raw-txn', rawTxn], ['kafka-log', viaLog]]) {
        const r = await load(send)
        rounds[name].push(r)
        process.stderr.write(`${name} round ${round + 1}: ${Math.round(r.perSec)} events/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms\n`)
      }
    }
    for (const [name, list] of Object.entries(rounds)) {
      const sorted = [...list].sort((x, y) => x.perSec - y.perSec)
      results.push({ name, ...sorted[Math.floor(sorted.length / 2)], rounds: list.map((r) => Math.round(r.perSec)) })
    }
    await Promise.all(list.map((p) => p.disconnect()))
    await log.close()
  }
  await admin.disconnect()
  await broker?.stop()

  const by = Object.fromEntries(results.map((r) => [r.name, r.perSec]))
  const summary = {
    machine: machine(),
    secondsPerCase: SECONDS,
    senders: SENDERS,
    producers: PRODUCERS,
    results: results.map((r) => ({ ...r, perSec: Math.round(r.perSec), p50: +r.p50.toFixed(2), p99: +r.p99.toFixed(2) })),
    kafkaLogOverRawTxn: +(by['kafka-log'] / by['raw-txn']).toFixed(3),
    perRoundRatios: results.find((r) => r.name === 'kafka-log').rounds.map((v, i) => +(v / results.find((r) => r.name === 'raw-txn').rounds[i]).toFixed(3)),
    rawTxnOverRawGrouped: +(by['raw-txn'] / by['raw-grouped']).toFixed(3),
  }
  console.log(JSON.stringify(summary, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
