// KafkaLog.read decodes record batches itself (record-batch-v2.ts): on a real broker, a partition
// holding committed, aborted and still-open transactions of two producers interleaved, plain
// records and a gzip batch reads exactly the committed records, as kafkajs' own consumer logic does.
import { type Admin, CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs'
import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import type { LogRecord } from '../types.js'
import { waitFor } from '../contract-group.js'
import { KafkaLog } from './index.js'
import { PartitionReader } from './partition-reader.js'

let brokers: string[] = []
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `batch-v2-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`

async function producer(t: Test, kafka: Kafka, transactionalId?: string): Promise<Producer> {
  const p = kafka.producer(transactionalId ? { transactionalId, idempotent: true, maxInFlightRequests: 1 } : { idempotent: true })
  await p.connect()
  t.teardown(() => p.disconnect())
  return p
}

const msg = (v: string, ts: number) => ({ key: `key-${v}`, value: v, partition: 0, timestamp: String(ts) })
const values = (records: LogRecord[]): string[] => records.map((r) => r.value.toString())

/** every record from `from` on, `max` at a time, continuing at the last offset + 1 as consumers do */
async function readAll(log: KafkaLog, topic: string, from: number, max: number): Promise<LogRecord[]> {
  const out: LogRecord[] = []
  for (;;) {
    const got = await log.read(topic, 0, from, max)
    if (got.length === 0) return out
    t.ok(got.length <= max, `at most ${max} records`)
    out.push(...got)
    from = got[got.length - 1].offset + 1
  }
}

t.test('read_committed: aborted and open transactions are never read, markers are stepped over', async (t) => {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  t.teardown(() => log.close())
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 1 })
  const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING })
  const a = await producer(t, kafka, unique('a'))
  const b = await producer(t, kafka, unique('b'))
  const plain = await producer(t, kafka)
  // an hour back: the broker deletes records older than its retention (7 days) at its next check
  const ts = Date.now() - 3_600_000

  // A and B write into the same partition at once; B's transaction is aborted, A's committed
  const ta = await a.transaction()
  const tb = await b.transaction()
  await ta.send({ topic, acks: -1, messages: [msg('a1', ts + 1), msg('a2', ts + 2)] })
  const [b1] = await tb.send({ topic, acks: -1, messages: [msg('b1', ts + 3)] })
  await plain.send({ topic, acks: -1, messages: [msg('n1', ts + 4)] })
  await ta.send({ topic, acks: -1, messages: [msg('a3', ts + 5)] })
  await tb.send({ topic, acks: -1, messages: [msg('b2', ts + 6), msg('b3', ts + 7)] })
  await ta.commit()
  await tb.abort()
  await plain.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [msg('z1', ts + 8), msg('z2', ts + 9)] })
  const tc = await a.transaction()
  await tc.send({ topic, acks: -1, messages: [msg('a4', ts + 10)] })
  await tc.abort()
  const td = await a.transaction()
  await td.send({ topic, acks: -1, messages: [msg('a5', ts + 11)] })
  await td.commit()
  const committed = ['a1', 'a2', 'n1', 'a3', 'z1', 'z2', 'a5']

  // commit markers reach the partition after commit() answers: wait for the last one's
  let all: LogRecord[] = []
  await waitFor('the last commit marker', async () => values((all = await log.read(topic, 0, 0, 100))).at(-1) === 'a5')
  t.same(values(all), committed, 'the committed records, in offset order')
  t.same(all.map((r) => r.key), committed.map((v) => `key-${v}`), 'with their keys')
  t.same(all.map((r) => r.timestamp - ts), [1, 2, 4, 5, 8, 9, 11], 'and their timestamps')
  t.ok(all.every((r, i) => r.partition === 0 && (i === 0 || r.offset > all[i - 1].offset)), 'offsets increase')
  t.ok(all.at(-1)!.offset - all[0].offset > committed.length, 'offsets are not dense: aborted records and markers take offsets')

  // kafkajs' own decoder and read_committed filter (its Batch) agree record for record
  const reader = new PartitionReader(kafka)
  t.teardown(() => reader.close())
  const theirs = []
  for (let from = 0; ;) {
    const fetched = await reader.fetch(topic, 0, from, 0)
    theirs.push(...fetched.messages)
    if (fetched.next <= from) break
    from = fetched.next
  }
  t.same(all.map((r) => [r.offset, r.key, r.value.toString(), r.timestamp]),
    theirs.map((m) => [Number(m.offset), m.key?.toString(), m.value?.toString(), Number(m.timestamp)]), 'kafkajs reads the same')

  for (const max of [1, 2, 3]) t.same(values(await readAll(log, topic, 0, max)), committed, `read ${max} at a time, continuing past markers`)
  t.same(values(await log.read(topic, 0, Number(b1.baseOffset), 100)), committed.slice(2), 'a read starting inside an aborted transaction skips it')

  // an open transaction holds back what follows it (the last stable offset), until it ends
  const end = await log.endOffset(topic, 0)
  const te = await b.transaction()
  await te.send({ topic, acks: -1, messages: [msg('e1', ts + 12)] })
  await plain.send({ topic, acks: -1, messages: [msg('n2', ts + 13)] })
  t.same(await log.read(topic, 0, end, 100), [], 'nothing is read while the transaction before it is open')
  await te.abort()
  // the abort markers reach the partition after abort() answers: the record shows once they do
  let after: string[] = []
  await waitFor('the abort markers', async () => (after = values(await log.read(topic, 0, end, 100))).length > 0)
  t.same(after, ['n2'], 'after its abort, the plain record after it is read, not e1')
  t.same(values(await readAll(log, topic, 0, 4)), [...committed, 'n2'], 'and the whole partition reads in order')
})

t.test('a read past the end answers nothing; one below the head starts at the head', async (t) => {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  t.teardown(() => log.close())
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 1 })
  await log.append(topic, Array.from({ length: 30 }, (_, i) => ({ key: 'k', value: Buffer.from(`v${i}`), timestamp: Date.now() })))
  const end = await log.endOffset(topic, 0)
  t.same(await log.read(topic, 0, end + 5, 10), [], 'past the end')
  const first = await log.read(topic, 0, 0, 7)
  t.same(values(first), Array.from({ length: 7 }, (_, i) => `v${i}`))
  const admin = await kafkaAdmin(t)
  await admin.fetchTopicMetadata({ topics: [topic] })
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(first[5].offset) }] })
  // the rest of the first fetch was kept for a read continuing at v7; this one starts elsewhere
  t.same(values(await log.read(topic, 0, 0, 3)), ['v5', 'v6', 'v7'], 'from 0 after the head moved: the head')
})

async function kafkaAdmin(t: Test): Promise<Admin> {
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  t.teardown(() => admin.disconnect())
  return admin
}

t.test('fetches cut short inside a batch resume at that batch', async (t) => {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  t.teardown(() => log.close())
  const topic = unique('t')
  await log.createTopic({ name: topic, partitions: 1 })
  const sent: string[] = []
  for (let append = 0; append < 6; append++) {
    const batch = Array.from({ length: 1 + append }, (_, i) => `append${append}-record${i}-${'x'.repeat(20 * i)}`)
    sent.push(...batch)
    await log.append(topic, batch.map((v) => ({ key: `k${append}`, value: Buffer.from(v), timestamp: Date.now() })))
  }
  const reader = new PartitionReader(new Kafka({ brokers, logLevel: logLevel.NOTHING }))
  t.teardown(() => reader.close())
  // byte limits around a batch's size: the broker sends the first whole batch and cuts the next
  for (const maxBytes of [1, 90, 150, 260, 400, 1000]) {
    const got: string[] = []
    let fetches = 0
    for (let from = 0; ;) {
      const fetched = await reader.records(topic, 0, from, 0, maxBytes)
      fetches++
      got.push(...values(fetched.records))
      if (fetched.next >= fetched.stable) break
      t.ok(fetched.next > from, `each fetch moves on (max ${maxBytes} bytes, from ${from})`)
      from = fetched.next
    }
    t.same(got, sent, `every record once, in order, ${maxBytes} bytes a fetch (${fetches} fetches)`)
  }
})
