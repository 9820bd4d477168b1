import { Kafka, logLevel, type Producer } from 'kafkajs'
import t from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { recordingListener, waitFor } from '../contract-group.js'
import { type AbortedTransaction, committedOnly } from './aborted-filter.js'
import { KafkaLog } from './index.js'
import type { RawMessage } from './kafkajs-internals.js'

/** a record as kafkajs decodes it: data, or (`marker`) a transaction's commit or abort marker */
function raw(offset: number, producerId: string, o: { value?: string; marker?: 'abort' | 'commit'; inTransaction?: boolean } = {}): RawMessage {
  const key = o.marker === undefined ? Buffer.from('k') : Buffer.from([0, 0, 0, o.marker === 'abort' ? 0 : 1])
  return {
    offset: String(offset),
    timestamp: '0',
    key,
    value: o.value === undefined ? null : Buffer.from(o.value),
    isControlRecord: o.marker !== undefined,
    batchContext: { producerId, inTransaction: o.inTransaction ?? true },
  }
}
const values = (list: RawMessage[]): string[] => list.map((m) => String(m.value))

t.test('records of aborted transactions are dropped, whatever the order of the broker\'s list', async (t) => {
  // A and B interleave; B aborts first, so the broker lists B before A
  const log = [
    raw(0, 'A', { value: 'a1' }), raw(1, 'B', { value: 'b1' }), raw(2, 'A', { value: 'a2' }), raw(3, 'B', { value: 'b2' }),
    raw(4, 'B', { marker: 'abort' }), raw(5, 'A', { marker: 'abort' }),
    raw(6, 'A', { value: 'a3' }), raw(7, 'A', { marker: 'commit' }), raw(8, 'N', { value: 'plain', inTransaction: false }),
  ]
  const aborted: AbortedTransaction[] = [{ producerId: 'B', firstOffset: '1' }, { producerId: 'A', firstOffset: '0' }]
  t.same(values(committedOnly(log, aborted)), ['a3', 'plain'], 'from the start')
  t.same(values(committedOnly(log.slice(2), aborted)), ['a3', 'plain'], 'from inside both aborted transactions')
  t.same(values(committedOnly(log, [])), ['a1', 'b1', 'a2', 'b2', 'a3', 'plain'], 'nothing aborted: every data record, no marker')
  t.same(values(committedOnly(log, [{ producerId: 'A', firstOffset: '0' }])), ['b1', 'b2', 'a3', 'plain'], 'only A aborted')
})

t.test('on a broker: interleaved aborted transactions stay invisible to reads and to the group', async (t) => {
  const brokers = await sharedKafkaBrokers()
  const stamp = `${process.pid}-${Date.now().toString(36)}`
  const topic = `aborted-${stamp}`
  const log = await KafkaLog.open({ brokers, nodeId: `aborted-${stamp}` })
  t.teardown(() => log.close())
  await log.createTopic({ name: topic, partitions: 1 })
  const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING })
  const producers: Producer[] = []
  t.teardown(() => Promise.all(producers.map((p) => p.disconnect())))
  const transactional = async (id: string) => {
    const p = kafka.producer({ transactionalId: `${id}-${stamp}`, idempotent: true, maxInFlightRequests: 1 })
    producers.push(p)
    await p.connect()
    return p.transaction()
  }
  const send = (txn: Awaited<ReturnType<typeof transactional>>, value: string) => txn.send({ topic, acks: -1, messages: [{ partition: 0, value }] })
  const a = await transactional('a')
  const b = await transactional('b')
  await send(a, 'a1')
  await send(b, 'b1')
  await send(a, 'a2')
  await send(b, 'b2')
  await b.abort()
  await a.abort()
  await log.append(topic, [{ key: 'k', value: Buffer.from('committed'), timestamp: Date.now(), partition: 0 }])

  t.same((await log.read(topic, 0, 0, 100)).map((r) => r.value.toString()), ['committed'], 'read from the start')
  t.same((await log.read(topic, 0, 2, 100)).map((r) => r.value.toString()), ['committed'], 'read from inside both aborted transactions')
  const listener = recordingListener()
  const member = await log.join(topic, `aborted-${stamp}`, { url: 'http://aborted.test' }, listener)
  t.teardown(() => member.leave())
  await waitFor('the committed record delivered to the group', () => listener.count() > 0)
  t.same((listener.got.get(0) ?? []).map((r) => r.value.toString()), ['committed'], 'the group member gets the committed record alone')
})
