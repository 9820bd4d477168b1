/**
 * One writer per partition, fenced by the broker: a claim fences the writer before it (its appends
 * are refused from then on, nothing of them readable), aborts a transaction it left open, and an
 * append racing a claim is all or nothing.
 */
import { Kafka, logLevel } from 'kafkajs'
import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { readAll } from '../contract-group.js'
import { LogError } from '../errors.js'
import type { PartitionWriter, ProducerRecord } from '../types.js'
import { KafkaLog } from './index.js'
import { sends } from './partition-writer.js'

let brokers: string[] = []
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `writer-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`

async function node(t: Test): Promise<KafkaLog> {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node'), writerTimeoutMs: 10_000 })
  t.teardown(() => log.close())
  return log
}

const records = (tag: string, n: number): ProducerRecord[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${tag}-${i}`, value: Buffer.from(`${tag}:${i}`), timestamp: Date.now() }))

const values = async (log: KafkaLog, topic: string, p: number): Promise<string[]> => (await readAll(log, topic, p)).map((r) => r.value.toString())

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
    return undefined
  } catch (err) {
    return err instanceof LogError ? err.code : String(err)
  }
}

t.test('a claim fences the writer before it; the end an append answers is the partition\'s end after it', async (t) => {
  const [a, b] = [await node(t), await node(t)]
  const topic = unique('topic')
  await a.createTopic({ name: topic, partitions: 2 })
  await b.createTopic({ name: topic, partitions: 2 })
  const id = unique('id')
  const first = await a.claim(topic, 1, id)
  const end = await first.append(records('first', 3))
  t.equal(end, await b.endOffset(topic, 1), 'the answered end is the end readers see (one past the commit marker)')
  t.same(await values(b, topic, 1), ['first:0', 'first:1', 'first:2'], 'readable as soon as the append answered')
  t.same(await values(b, topic, 0), [], 'in the claimed partition only')

  const second = await b.claim(topic, 1, id)
  t.equal(await refusal(first.append(records('zombie', 2))), 'LOG_FENCED', 'the first writer is refused as fenced')
  t.notOk(first.usable, 'and can never write again')
  t.equal(await refusal(first.append(records('zombie-again', 1))), 'LOG_FENCED')
  const end2 = await second.append(records('second', 2))
  t.equal(end2, await a.endOffset(topic, 1))
  t.same(await values(a, topic, 1), ['first:0', 'first:1', 'first:2', 'second:0', 'second:1'], 'nothing of the fenced writer is readable')
  await first.close()
  await second.close()
})

t.test('a claim aborts a transaction the previous writer left open, at once', async (t) => {
  const log = await node(t)
  const topic = unique('topic')
  await log.createTopic({ name: topic, partitions: 1 })
  const id = unique('id')
  // a writer frozen mid-transaction: its records sent, its commit never
  const kafka = new Kafka({ clientId: 'frozen', brokers, logLevel: logLevel.NOTHING })
  const frozen = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60_000 })
  await frozen.connect()
  t.teardown(() => frozen.disconnect())
  const txn = await frozen.transaction()
  await txn.sendBatch({ topicMessages: [{ topic, messages: [{ key: 'k', value: 'left open', partition: 0 }] }], acks: -1 })

  const started = Date.now()
  const writer = await log.claim(topic, 0, id)
  t.ok(Date.now() - started < 5000, `claimed in ${Date.now() - started} ms, long before the transaction timeout`)
  await writer.append(records('owner', 1))
  t.same(await values(log, topic, 0), ['owner:0'], 'the open transaction was aborted: its record is never readable')
  t.ok((await refusal(txn.commit())) !== undefined, 'and the frozen writer cannot commit it when it wakes')
  t.same(await values(log, topic, 0), ['owner:0'])
  await writer.close()
})

t.test('an append racing a claim is all or nothing', async (t) => {
  const [a, b] = [await node(t), await node(t)]
  const topic = unique('topic')
  await a.createTopic({ name: topic, partitions: 1 })
  await b.createTopic({ name: topic, partitions: 1 })
  for (let round = 0; round < 4; round++) {
    const id = unique('id')
    const old: PartitionWriter = await a.claim(topic, 0, id)
    const before = (await values(a, topic, 0)).length
    const append = old.append(records(`race${round}`, 3000))
    await new Promise((resolve) => setTimeout(resolve, round * 15))
    const claimed = b.claim(topic, 0, id)
    const outcome = await refusal(append)
    const fresh = await claimed
    const racing = (await values(b, topic, 0)).slice(before)
    const allOrNothing = racing.length === 0 || racing.length === 3000
    t.ok(outcome === undefined ? racing.length === 3000 : outcome === 'LOG_OUTCOME_UNKNOWN' ? allOrNothing : racing.length === 0,
      `round ${round}: the append ${outcome === undefined ? 'answered' : `was refused (${outcome})`}, ${racing.length} of its 3000 records readable`)
    await old.close()
    await fresh.close()
  }
})

t.test('an append goes out in sends of at most 500 records and 4 MiB, in order', (t) => {
  // kafkajs copies a send's group of messages once per message: a send's cost grows with the
  // square of its records, and 10 000 of them held the event loop for over 100 ms
  const many = [...sends(records('many', 1201), 3)]
  t.same(many.map((s) => s.length), [500, 500, 201], 'three sends')
  t.same(many.flat().map((m) => m.key), records('many', 1201).map((r) => r.key), 'every record once, in order')
  t.ok(many.flat().every((m) => m.partition === 3), 'all to the writer\'s partition')
  const big = Array.from({ length: 9 }, (_, i) => ({ key: `big-${i}`, value: Buffer.alloc(1024 * 1024), timestamp: 0 }))
  t.same([...sends(big, 0)].map((s) => s.length), [3, 3, 3], 'three 1 MiB records a send')
  t.end()
})
