// `goalpost bench --kafka` against a real broker: what it produces is what POST /api/event appends
// — the logged event bytes, keyed by site and session, in the partition the key names.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Kafka, Partitioners, logLevel } from 'kafkajs'

import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { readEvent } from '../dist/log/index.js'

const BROKERS = (await sharedKafkaBrokers()).join(',')
const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js')
const PARTITIONS = 4
const CONSUME_DEADLINE_MS = 30_000

t.test('goalpost bench --kafka produces the logged events, keyed by site and session', async (t) => {
  const brokers = BROKERS.split(',')
  const prefix = `cli-${randomBytes(4).toString('hex')}`
  const kafka = new Kafka({ clientId: 'cli-test', brokers, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  t.teardown(async () => {
    await admin.deleteTopics({ topics: [`${prefix}.events`] }).catch(() => {})
    await admin.disconnect()
  })

  const missing = spawnSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, CLI, 'bench', '--kafka', BROKERS, '--prefix', prefix, '--duration', '1'], { encoding: 'utf8' })
  t.equal(missing.status, 1, 'no topic: a failure, not a hang')
  t.match(missing.stderr, new RegExp(`topic ${prefix}\\.events does not exist .*GOALPOST_KAFKA_PREFIX=${prefix}`))

  await admin.createTopics({ topics: [{ topic: `${prefix}.events`, numPartitions: PARTITIONS }], waitForLeaders: true })
  const ran = spawnSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, CLI, 'bench', '--kafka', BROKERS, '--prefix', prefix, '--duration', '2', '--connections', '4', '--batch', '20', '--events-per-session', '1', '--json'], { encoding: 'utf8', timeout: 120_000 })
  t.equal(ran.status, 0, ran.stderr)
  const r = JSON.parse(ran.stdout) as { load: { okEvents: number; byStatus: Record<string, number> }; expected: { sessions: number }[] }
  t.ok(r.load.okEvents > 0, `${r.load.okEvents} events acknowledged by the broker`)
  t.same(Object.keys(r.load.byStatus), ['acked'])

  const consumer = kafka.consumer({ groupId: `${prefix}-check` })
  await consumer.connect()
  t.teardown(() => consumer.disconnect())
  await consumer.subscribe({ topic: `${prefix}.events`, fromBeginning: true })
  const partitionOf = Partitioners.DefaultPartitioner()
  const metadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }))
  const seen = { n: 0, keys: new Set<string>(), badKey: 0, badPartition: 0, badShape: 0 }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CONSUME_DEADLINE_MS)
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        const key = message.key!.toString()
        const e = readEvent(message.value!).toEvent() as unknown as Record<string, unknown>
        if (key !== `${String(e.site_id)}\u0000${String(e.session_id)}`) seen.badKey++
        if (partitionOf({ topic: '', partitionMetadata: metadata, message: { key, value: null } }) !== partition) seen.badPartition++
        // the logged shape: event time and receive time in epoch ms, no `timestamp`, `path` present
        if (typeof e.ts !== 'number' || e.received_at !== e.ts || 'timestamp' in e || typeof e.path !== 'string' || String(e.ts) !== message.timestamp) seen.badShape++
        seen.keys.add(key)
        if (++seen.n === r.load.okEvents) {
          clearTimeout(timer)
          resolve()
        }
      },
    })
  })
  t.equal(seen.n, r.load.okEvents, 'every acknowledged event is in the topic')
  t.equal(seen.keys.size, r.expected[0].sessions, 'one key per session')
  t.same([seen.badKey, seen.badPartition, seen.badShape], [0, 0, 0], 'keys, partitions and the logged shape as the service writes them')
})
