/**
 * The changelog on a real broker, between two nodes' stores: the new owner's claim fences the old
 * one, whose write is refused as lost and leaves its store untrusted; a store is kept on restore
 * only while nobody wrote the changelog since it did.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../test/helpers/kafka-broker.js'
import { KafkaLog } from '../log/index.js'
import { StateStore, type Op } from '../store/index.js'
import { ChangelogLost, LogChangelog } from './changelog.js'

let brokers: string[] = []
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `changelog-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`

/** a node: its log client and its own store */
async function node(t: Test, topic: string): Promise<{ log: KafkaLog; store: StateStore }> {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node') })
  await log.createTopic({ name: topic, partitions: 2, compacted: true })
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-changelog-'))
  const store = await StateStore.open(dir)
  t.teardown(async () => {
    await log.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { log, store }
}

const put = (key: string, value: string): Op => ({ type: 'put', key, value: Buffer.from(value) })

/** what a task does: the changelog first, then the same operations and the changelog's end to the store */
async function persist(changelog: { write(ops: Op[]): Promise<number> }, store: StateStore, p: number, ops: Op[]): Promise<void> {
  const end = await changelog.write(ops)
  await store.write([...ops, store.changelogEndOp(p, end)])
}

async function offsetOf(store: StateStore, p: number): Promise<string | undefined> {
  for await (const [key, value] of store.partitionEntries(p)) if (key === `o!${p}`) return value.toString()
  return undefined
}

t.test('a new owner fences the old one; the old one\'s store is then restored from the changelog', async (t) => {
  const topic = unique('state')
  const writers = unique('state')
  const a = await node(t, topic)
  const b = await node(t, topic)
  const changelogA = new LogChangelog(a.log, topic, writers)
  const changelogB = new LogChangelog(b.log, topic, writers)

  const first = await changelogA.claim(1)
  t.equal(await first.restore(a.store), 0, 'an empty changelog: nothing to restore')
  await persist(first, a.store, 1, [put('o!1', '10'), put('c!1!shop!000001', 'a')])

  // b takes the partition over while a does not know yet
  const second = await changelogB.claim(1)
  t.equal(await second.restore(b.store), 2, 'the new owner restores what the old one wrote')
  t.equal(await offsetOf(b.store, 1), '10')

  // a wakes up and writes a stale whole value: refused, and its store is written nothing
  const stale = await first.write([put('o!1', '12'), put('c!1!shop!000001', 'stale')]).then(() => 'written', (err: unknown) => err)
  t.type(stale, ChangelogLost, 'the old owner\'s write is refused: the partition is lost to it')
  t.equal(await a.store.changelogEnd(1), -1, 'the old owner\'s store is no longer trusted over the changelog')
  t.rejects(first.write([put('o!1', '13')]), ChangelogLost, 'and stays refused')

  await persist(second, b.store, 1, [put('o!1', '20'), put('c!1!shop!000001', 'b')])
  await second.release()

  // the partition comes back to a: its store is replaced by the changelog's content
  const third = await changelogA.claim(1)
  t.equal(await third.restore(a.store), 4, 'restored from the changelog, not trusted from the store')
  t.equal(await offsetOf(a.store, 1), '20')
  const values = new Map<string, string>()
  for await (const [key, value] of a.store.partitionEntries(1)) values.set(key, value.toString())
  t.equal(values.get('c!1!shop!000001'), 'b', 'the stale value never reached the changelog')
  await persist(third, a.store, 1, [put('o!1', '21')])
  await third.release()

  // nobody wrote since: a's store is current and kept
  const fourth = await changelogA.claim(1)
  t.equal(await fourth.restore(a.store), 0, 'a store that wrote the changelog last is kept')
  await fourth.release()
  // but not once another owner wrote since
  const fifth = await changelogB.claim(1)
  await fifth.restore(b.store)
  await persist(fifth, b.store, 1, [put('o!1', '22')])
  await fifth.release()
  const sixth = await changelogA.claim(1)
  t.equal(await sixth.restore(a.store), 6, 'another owner wrote since: restored from the changelog')
  t.equal(await offsetOf(a.store, 1), '22')
  await sixth.release()
})
