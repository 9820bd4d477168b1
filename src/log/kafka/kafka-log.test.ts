import { Kafka, logLevel } from 'kafkajs'
import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { freePort } from '../../../test/helpers/server.js'
import { waitFor } from '../contract-group.js'
import { LogError } from '../errors.js'
import { KafkaLog } from './index.js'

let brokers: string[] = []
// in a hook rather than at the top: a broker that never came up is reported as a failure, with why
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `kafka-log-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`

async function open(t: Test): Promise<KafkaLog> {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  t.teardown(() => log.close())
  return log
}

t.test('an unreachable broker fails open() promptly, naming the address', async (t) => {
  const port = await freePort()
  const started = Date.now()
  const err = await KafkaLog.open({ brokers: [`127.0.0.1:${port}`], nodeId: 'nobody' }).catch((e: unknown) => e)
  t.ok(err instanceof LogError && err.code === 'LOG_UNAVAILABLE', `LOG_UNAVAILABLE (${String(err)})`)
  t.match((err as Error).message, `127.0.0.1:${port}`)
  t.ok(Date.now() - started < 30_000, `within ${Date.now() - started} ms`)
})

t.test('bad options name the field', async (t) => {
  await t.rejects(KafkaLog.open({ brokers: [], nodeId: 'x' }), /brokers/)
  await t.rejects(KafkaLog.open({ brokers, nodeId: 'not ok!' }), /nodeId/)
})

t.test('topic creation: the broker\'s refusal is named, another partition count is a conflict', async (t) => {
  const log = await open(t)
  await t.resolves(log.createTopic({ name: unique('t'), partitions: 1, retentionMs: 1000 }), 'a spec with a retention is created')
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 3 })
  await t.rejects(log.createTopic({ name: topic, partitions: 4 }), { code: 'LOG_TOPIC_CONFLICT', message: /3 partitions/ })
  const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  // one broker cannot hold three replicas: the broker says so, and the error carries its words
  const tooMany = await KafkaLog.open({ brokers, nodeId: unique('node'), replicationFactor: 3 })
  t.teardown(() => tooMany.close())
  await t.rejects(tooMany.createTopic({ name: unique('t'), partitions: 1 }), { code: 'LOG_REFUSED', message: /INVALID_REPLICATION_FACTOR|replication factor/i })
  const compacted = unique('t')
  await log.createTopic({ name: compacted, partitions: 1, compacted: true })
  const configs = await admin.describeConfigs({ resources: [{ type: 2, name: compacted, configNames: ['cleanup.policy'] }], includeSynonyms: false })
  t.equal(configs.resources[0].configEntries[0].configValue, 'compact', 'compacted: cleanup.policy=compact')
})

t.test('partitionFor agrees with where a plain kafkajs producer puts a key', async (t) => {
  const log = await open(t)
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 6 })
  const producer = new Kafka({ brokers, logLevel: logLevel.NOTHING }).producer()
  await producer.connect()
  t.teardown(() => producer.disconnect())
  const keys = Array.from({ length: 60 }, (_, i) => `site-${i % 7}:session-${i * 31}`)
  const sent = await producer.send({ topic, acks: -1, messages: keys.map((key) => ({ key, value: key })) })
  t.ok(sent.length > 1, 'the keys spread over partitions')
  for (let p = 0; p < 6; p++) {
    for (const record of await log.read(topic, p, 0, 1000)) {
      if (log.partitionFor(topic, record.key) !== p) t.fail(`${record.key} is in ${p}, partitionFor says ${log.partitionFor(topic, record.key)}`)
    }
  }
  t.equal((await Promise.all([0, 1, 2, 3, 4, 5].map((p) => log.read(topic, p, 0, 1000)))).flat().length, 60, 'every record read back')
})

t.test('appends are refused with LOG_FULL past maxPending, and with LOG_CLOSED after close', async (t) => {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node'), maxPending: 10 })
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 1 })
  const rec = { key: 'k', value: Buffer.from('v'), timestamp: Date.now() }
  const first = log.append(topic, Array.from({ length: 8 }, () => rec))
  await t.rejects(log.append(topic, Array.from({ length: 5 }, () => rec)), { code: 'LOG_FULL' })
  await first
  await log.close()
  await t.rejects(log.append(topic, [rec]), { code: 'LOG_CLOSED' })
})

t.test('reading and subscribing below the retained head start at the head', async (t) => {
  const log = await open(t)
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 1 })
  await log.append(topic, Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: Buffer.from(`v${i}`), timestamp: Date.now() })))
  const all = await log.read(topic, 0, 0, 100)
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  await admin.fetchTopicMetadata({ topics: [topic] })
  // what retention does, on demand: the log now starts at the sixth record
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(all[5].offset) }] })
  t.equal(await log.beginOffset(topic, 0), all[5].offset)
  t.same((await log.read(topic, 0, 0, 100)).map((r) => r.value.toString()), ['v5', 'v6', 'v7', 'v8', 'v9'], 'read from 0 starts at the head')
  const got: string[] = []
  const sub = log.subscribe(topic, 0, 0, (records) => void got.push(...records.map((r) => r.value.toString())))
  await waitFor('delivery from the head', () => got.length >= 5)
  await sub.close()
  t.same(got, ['v5', 'v6', 'v7', 'v8', 'v9'], 'a subscription from 0 starts at the head')
})
