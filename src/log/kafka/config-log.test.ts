import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { waitFor } from '../contract-group.js'
import type { ConfigRecord } from '../types.js'
import { KafkaConfigLog, KafkaLog } from './index.js'

let brokers: string[] = []
// in a hook rather than at the top: a broker that never came up is reported as a failure, with why
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `config-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`

async function node(t: Test, topic: string): Promise<{ config: KafkaConfigLog; seen: ConfigRecord[] }> {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  const config = await KafkaConfigLog.open(log, topic)
  t.teardown(async () => {
    await config.close()
    await log.close()
  })
  await config.load()
  const seen: ConfigRecord[] = []
  config.watch((record) => seen.push(record))
  return { config, seen }
}

t.test('two nodes apply every write, their own and the other\'s, in one order', async (t) => {
  const topic = unique('topic')
  const a = await node(t, topic)
  const b = await node(t, topic)
  // the same key written on both nodes at once: both views must end with the same winner
  const writes: Promise<void>[] = []
  for (let i = 0; i < 20; i++) {
    writes.push(a.config.put({ kind: 'site', id: 'shop', value: { from: 'a', i } }))
    writes.push(b.config.put({ kind: 'site', id: 'shop', value: { from: 'b', i } }))
    writes.push(a.config.put({ kind: 'goal', id: `g${i}`, value: { i } }))
  }
  await Promise.all(writes)
  await waitFor('both views to apply every write', () => a.seen.length >= 60 && b.seen.length >= 60)
  t.equal(a.seen.length, 60, 'node a saw every write once')
  t.same(b.seen, a.seen, 'node b saw the same writes in the same order')
  const loadedA = await a.config.load()
  t.same(await b.config.load(), loadedA, 'both load the same live records')
  t.same(loadedA.find((r) => r.kind === 'site'), a.seen.filter((r) => r.kind === 'site').at(-1), 'the winner is the last write in the log')
  await b.config.put({ kind: 'site', id: 'shop', value: null })
  t.same(b.seen.at(-1), { kind: 'site', id: 'shop', value: null }, 'the writer applied its delete before put resolved')
  t.notOk((await a.config.load()).some((r) => r.kind === 'site'), 'deleted for every node')
})

t.test('a bad record is refused before anything is written', async (t) => {
  const { config } = await node(t, unique('topic'))
  await t.rejects(config.put({ kind: '', id: 'x', value: 1 }), { code: 'LOG_BAD_ARGUMENT', message: /kind/ })
  await t.rejects(config.put({ kind: 'site', id: '', value: 1 }), { code: 'LOG_BAD_ARGUMENT', message: /id/ })
  t.same(await config.load(), [])
})
