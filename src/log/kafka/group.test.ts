import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { type RecordingListener, recordingListener, waitFor } from '../contract-group.js'
import type { LogRecord, Membership } from '../types.js'
import { KafkaLog } from './index.js'

let brokers: string[] = []
// in a hook rather than at the top: a broker that never came up is reported as a failure, with why
t.before(async () => {
  brokers = await sharedKafkaBrokers()
})
let seq = 0
const unique = (what: string): string => `group-${what}-${process.pid}-${Date.now().toString(36)}-${seq++}`
const PARTITIONS = 4
const sorted = (list: number[]): number[] => [...list].sort((a, b) => a - b)

async function openNode(t: Test, topic: string): Promise<KafkaLog> {
  const log = await KafkaLog.open({ brokers, nodeId: unique('node'), sessionTimeoutMs: 6000 })
  t.teardown(() => log.close())
  await log.createTopic({ name: topic, partitions: PARTITIONS })
  return log
}

async function append(log: KafkaLog, topic: string, from: number, n: number): Promise<void> {
  const records = Array.from({ length: n }, (_, i) => ({ key: `site:s${(from + i) % 37}`, value: Buffer.from(`e${from + i}`), timestamp: Date.now() }))
  await log.append(topic, records)
}

/** every committed record of the topic, per partition */
async function everything(log: KafkaLog, topic: string): Promise<LogRecord[][]> {
  const all: LogRecord[][] = []
  for (let p = 0; p < PARTITIONS; p++) all.push(await log.read(topic, p, 0, 100_000))
  return all
}

/** resume each partition after the last record any member processed: state that moved with it */
const resumeAfter = (listeners: () => RecordingListener[]) => (p: number): number | undefined => {
  const offsets = listeners().flatMap((l) => (l.got.get(p) ?? []).map((r) => r.offset))
  return offsets.length > 0 ? Math.max(...offsets) + 1 : undefined
}

async function splitGroup(t: Test) {
  const topic = unique('topic')
  const group = unique('g')
  const a = await openNode(t, topic)
  const b = await openNode(t, topic)
  const listeners: RecordingListener[] = []
  const la = recordingListener(resumeAfter(() => listeners))
  const lb = recordingListener(resumeAfter(() => listeners))
  listeners.push(la, lb)
  await append(a, topic, 0, 200)
  const ma = await a.join(topic, group, { url: 'http://node-a.test:8080' }, la)
  t.same(ma.owned(), [0, 1, 2, 3], 'the first member owns every partition')
  const mb = await b.join(topic, group, { url: 'http://node-b.test:8080' }, lb)
  await waitFor('the split', () => ma.owned().length + mb.owned().length === PARTITIONS && mb.owned().length > 0 && ma.owned().length > 0)
  return { topic, a, b, la, lb, ma, mb }
}

function deliveredOnce(t: Test, all: LogRecord[][], listeners: RecordingListener[]): void {
  for (let p = 0; p < PARTITIONS; p++) {
    const got = listeners.flatMap((l) => (l.got.get(p) ?? []).map((r) => r.offset)).sort((x, y) => x - y)
    t.same(got, all[p].map((r) => r.offset), `partition ${p}: every record delivered exactly once across the members`)
  }
}

t.test('two members split the partitions, and each sees the other in members()', async (t) => {
  const { topic, a, la, lb, ma, mb } = await splitGroup(t)
  t.equal(ma.owned().length, 2, 'balanced')
  t.same(sorted([...ma.owned(), ...mb.owned()]), [0, 1, 2, 3], 'each partition has one owner')
  t.same(la.events.slice(0, 2), [{ kind: 'assigned', partitions: [0, 1, 2, 3] }, { kind: 'revoked', partitions: [0, 1, 2, 3] }],
    'the rebalance revoked everything first')
  t.same(la.events.at(-1), { kind: 'assigned', partitions: ma.owned() })
  t.same(ma.owned(), [0, 1], 'the first member keeps a balanced share of what it had (sticky)')

  for (const [view, self] of [[ma, 'http://node-a.test:8080'], [mb, 'http://node-b.test:8080']] as [Membership, string][]) {
    let members = await view.members()
    await waitFor('a settled group', async () => {
      members = await view.members()
      return members.length === 2 && members.every((m) => m.partitions.length === 2)
    })
    const byUrl = new Map(members.map((m) => [m.url, m]))
    t.same(sorted(byUrl.get('http://node-a.test:8080')?.partitions ?? []), ma.owned(), `${self} sees node a's partitions`)
    t.same(sorted(byUrl.get('http://node-b.test:8080')?.partitions ?? []), mb.owned(), `${self} sees node b's partitions`)
    t.same(members.filter((m) => m.self).map((m) => m.url), [self], `${self} is marked self`)
  }

  await append(a, topic, 200, 200)
  const all = await everything(a, topic)
  const total = all.reduce((n, list) => n + list.length, 0)
  await waitFor('all records', () => la.count() + lb.count() >= total)
  deliveredOnce(t, all, [la, lb])
  t.same([...la.breaches, ...lb.breaches], [], 'no record outside ownership, no overlapping calls')
})

t.test('a rebalance revokes only the partitions that move; the ones that stay are kept and resume where they were', async (t) => {
  const topic = unique('topic')
  const group = unique('g')
  const a = await openNode(t, topic)
  const b = await openNode(t, topic)
  const listeners: RecordingListener[] = []
  const la = recordingListener(resumeAfter(() => listeners), true)
  const lb = recordingListener(resumeAfter(() => listeners), true)
  listeners.push(la, lb)
  await append(a, topic, 0, 200)
  const ma = await a.join(topic, group, { url: 'http://node-a.test:8080' }, la)
  await waitFor('the first records', () => la.count() >= 200)
  const mb = await b.join(topic, group, { url: 'http://node-b.test:8080' }, lb)
  // the first member gives up what moves before it hands the rest to its listener's `kept`: the
  // split can show in owned() before that call, so wait for it as well
  await waitFor('the split', () => ma.owned().length === 2 && mb.owned().length === 2 && la.events.some((e) => e.kind === 'kept'))
  t.same(la.events, [
    { kind: 'assigned', partitions: [0, 1, 2, 3] },
    { kind: 'revoked', partitions: [2, 3] },
    { kind: 'kept', partitions: [0, 1] },
  ], 'the first member gave up only what moved, and kept the rest')
  t.same(lb.events, [{ kind: 'assigned', partitions: [2, 3] }])
  t.ok(ma.current?.(), 'a member the group just confirmed vouches for its partitions')

  await append(a, topic, 200, 200)
  const all = await everything(a, topic)
  const total = all.reduce((n, list) => n + list.length, 0)
  await waitFor('all records', () => la.count() + lb.count() >= total)
  deliveredOnce(t, all, [la, lb])

  // the second member leaves: the first keeps its own again and is given the others
  await mb.leave()
  await waitFor('the first member owns everything', () => ma.owned().length === PARTITIONS)
  t.same(la.events.slice(3), [{ kind: 'kept', partitions: [0, 1] }, { kind: 'assigned', partitions: [2, 3] }])
  await append(a, topic, 400, 100)
  const after = await everything(a, topic)
  await waitFor('all records', () => la.count() + lb.count() >= after.reduce((n, list) => n + list.length, 0))
  deliveredOnce(t, after, [la, lb])
  t.same([...la.breaches, ...lb.breaches], [], 'no record outside ownership, no overlapping calls')
})

t.test('a partition restarted by its owner is revoked and assigned again once the group confirms the member', async (t) => {
  const topic = unique('topic')
  const a = await openNode(t, topic)
  const listeners: RecordingListener[] = []
  const la = recordingListener(resumeAfter(() => listeners), true)
  listeners.push(la)
  await append(a, topic, 0, 100)
  const ma = await a.join(topic, unique('g'), { url: 'http://node-a.test:8080' }, la)
  await waitFor('the first records', () => la.count() >= 100)
  const asked = Date.now()
  ma.restart?.([1])
  await waitFor('the restart', () => la.events.length === 3, 20_000)
  t.same(la.events.slice(1), [{ kind: 'revoked', partitions: [1] }, { kind: 'assigned', partitions: [1] }], 'only the partition asked for')
  t.ok(Date.now() - asked >= 1000, `after heartbeats answered since it was asked (${Date.now() - asked} ms)`)
  t.same(ma.owned(), [0, 1, 2, 3])
  await append(a, topic, 100, 100)
  const all = await everything(a, topic)
  await waitFor('all records', () => la.count() >= all.reduce((n, list) => n + list.length, 0))
  deliveredOnce(t, all, [la])
  t.same(la.breaches, [])
})

t.test('a member leaving hands its partitions over to the one that stays', async (t) => {
  const { topic, a, la, lb, ma, mb } = await splitGroup(t)
  const handed = mb.owned()
  await append(a, topic, 200, 100)
  await mb.leave()
  t.same(lb.events.at(-1), { kind: 'revoked', partitions: handed }, 'the leaver revoked its partitions')
  await waitFor('the survivor owns everything', () => ma.owned().length === PARTITIONS)
  t.same(la.events.at(-1), { kind: 'assigned', partitions: [0, 1, 2, 3] })
  await append(a, topic, 300, 100)
  const all = await everything(a, topic)
  const total = all.reduce((n, list) => n + list.length, 0)
  await waitFor('all records', () => la.count() + lb.count() >= total)
  deliveredOnce(t, all, [la, lb])
  t.same((await ma.members()).map((m) => ({ url: m.url, n: m.partitions.length })), [{ url: 'http://node-a.test:8080', n: 4 }])
  t.same([...la.breaches, ...lb.breaches], [], 'no record outside ownership, no overlapping calls')
})

t.test('a member that dies without leaving loses its partitions to the others after its session timeout', async (t) => {
  const topic = unique('topic')
  const group = unique('g')
  const SESSION_MS = 3000
  const member = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'helpers', 'kafka-member.ts')
  const child = spawn(process.execPath, ['--import=@tapjs/typescript/import', member, brokers.join(','), topic, group, 'http://doomed.test:1', String(SESSION_MS)], {
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => void child.kill('SIGKILL'))
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  await waitFor('the other process to own every partition', () => out.includes('owned 0,1,2,3'), 60_000)

  const a = await KafkaLog.open({ brokers, nodeId: unique('node'), sessionTimeoutMs: SESSION_MS })
  t.teardown(() => a.close())
  await a.createTopic({ name: topic, partitions: PARTITIONS })
  const la = recordingListener()
  const ma = await a.join(topic, group, { url: 'http://survivor.test:1' }, la)
  await waitFor('the split', () => ma.owned().length === 2, 30_000)
  const urls = (await ma.members()).map((m) => m.url).sort()
  t.same(urls, ['http://doomed.test:1', 'http://survivor.test:1'], 'both members listed')

  child.kill('SIGKILL')
  const killedAt = Date.now()
  await waitFor('the takeover', () => ma.owned().length === PARTITIONS, 60_000)
  const tookMs = Date.now() - killedAt
  t.comment(`takeover ${tookMs} ms after SIGKILL (session timeout ${SESSION_MS} ms)`)
  t.ok(tookMs >= SESSION_MS - 500, 'not before the session timed out')
  t.same(la.events.at(-1), { kind: 'assigned', partitions: [0, 1, 2, 3] })
  await append(a, topic, 0, 100)
  await waitFor('records of every partition', () => la.count() >= 100)
  t.same((await ma.members()).map((m) => m.url), ['http://survivor.test:1'], 'the dead member is gone from members()')
  t.same(la.breaches, [])
})
