// Interleavings of a partition task's fold with the work that runs during its awaits: snapshots
// that evict, and goals created while the fold writes dead letters. Each wraps a real store call so
// that the other work happens exactly inside the await.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedLog, EmbeddedConfigLog } from '../log/index.js'
import { Catalog } from '../catalog/index.js'
import { StateStore } from '../store/index.js'
import { initHash, hash64 } from '../sketch/index.js'
import { eventKey, type LoggedEvent } from '../schema/index.js'
import type { Goal, Site } from '../schema/index.js'
import { GoalIndex } from './goal-index.js'
import { PartitionTask, type TaskContext } from './partition-task.js'
import { hashKey } from '../sketch/index.js'
import { goalList } from '../query/index.js'

const HOUR = 3_600_000
const NOW = Date.now()
const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date(NOW).toISOString() }
const buy: Goal = { id: 'g-buy', site_id: 'shop', name: 'Buy', goal_type: 'custom_event', match_event: 'buy', created_at: new Date(NOW).toISOString() }

t.before(initHash)

const event = (session: string, ts: number, extra: Partial<LoggedEvent>): LoggedEvent =>
  ({ type: 'pageview', site_id: 'shop', session_id: session, ts, received_at: ts, ...extra })

async function setUp(t: Test, context: Partial<TaskContext> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-task-'))
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  await log.createTopic({ name: 'events', partitions: 1 })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  await catalog.put('site', 'shop', site)
  const store = await StateStore.open(join(dir, 'state'))
  const goals = new GoalIndex()
  const errors: string[] = []
  const ctx: TaskContext = {
    log, topic: 'events', store, catalog, goals, exactThreshold: 1000, retentionDays: 90,
    maxHotSessions: () => Infinity, onError: (err, where) => errors.push(`${where}: ${String(err)}`), ...context,
  }
  const { task } = await PartitionTask.open(0, ctx)
  t.teardown(async () => {
    await task.close()
    await log.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  /** appends raw values to the log and folds them as the consumer would */
  const fold = async (values: (LoggedEvent | string)[]) => {
    const from = await log.endOffset('events', 0)
    await log.append('events', values.map((v) => ({
      key: typeof v === 'string' ? 'raw' : eventKey(v.site_id, v.session_id),
      value: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)),
      timestamp: NOW,
    })))
    await task.fold(await log.read('events', 0, from, values.length))
  }
  return { ctx, log, catalog, store, goals, task, fold, errors }
}

const hk = (session: string) => {
  const h = hash64(eventKey('shop', session))
  return hashKey(h.hi, h.lo)
}

t.test('a snapshot that ends while a fold reads the store evicts none of the sessions that fold saw in memory', async (t) => {
  const { ctx, store, task, fold } = await setUp(t, { hotSessionMs: HOUR })
  const start = NOW - 3 * 24 * HOUR
  await fold([event('a', start, { path: '/landing' }), event('b', start, { path: '/other' })])
  await task.snapshot()
  // b leaves memory; a is read back, clean, by the next fold
  task.state.evictSummaries(Infinity)
  await fold([event('a', start + 60_000, { path: '/product' })])
  t.ok(task.state.summaries.has(hk('a')) && !task.state.summaries.has(hk('b')), 'a hot and clean, b cold')

  // the next fold sees a in memory and reads b from the store; a snapshot finishes during that read,
  // and every clean session counts as idle by then
  const getSummaries = store.getSummaries.bind(store)
  store.getSummaries = async (p, hks) => {
    ctx.hotSessionMs = -HOUR
    await task.snapshot()
    return getSummaries(p, hks)
  }
  await fold([event('a', start + 25 * HOUR, { path: '/account' }), event('b', start + 25 * HOUR, { path: '/account' })])
  store.getSummaries = getSummaries
  await task.snapshot()
  const [a] = await store.getSummaries(0, [hk('a')])
  t.equal(a?.entry_page, '/landing', 'a keeps the entry page of its first event')
  t.equal(a?.first, start, 'and its first event')
  t.equal(a?.exit_page, '/account')
  const [b] = await store.getSummaries(0, [hk('b')])
  t.equal(b?.entry_page, '/other', 'b, read back from the store after it left memory, keeps its first page too')
})

t.test('a goal created while a fold writes its dead letters counts the batch that fold just matched', async (t) => {
  const { catalog, store, goals, task, fold } = await setUp(t)
  const putDeadLetter = store.putDeadLetter.bind(store)
  let created: Promise<void> | undefined
  store.putDeadLetter = async (...args) => {
    // what the processor does when the catalog announces a goal: index it, then backfill
    created ??= (async () => {
      await catalog.put('goal', buy.id, buy)
      goals.add(buy)
      task.backfill(buy)
      await task.backfilling(buy.id)
    })()
    await created
    return putDeadLetter(...args)
  }
  await fold([event('s1', NOW - 60_000, { type: 'custom_event', event_name: 'buy' }), '{not json'])
  await created
  await task.backfilling(buy.id)
  const answer = goalList([task.state], site, [buy], 1)
  t.equal(answer.total_sessions, 1)
  t.equal(answer.goals[0].conversions, 1, 'the purchase folded before the goal existed is counted by its backfill')
})

t.test('a fold that runs while another awaits the store reads its own records: readers are not shared', async (t) => {
  const { store, task, fold } = await setUp(t, { hotSessionMs: HOUR })
  const start = NOW - 2 * HOUR
  await fold([event('a', start, { path: '/landing' })])
  await task.snapshot()
  task.state.evictSummaries(Infinity)
  // the first batch reads a's summary back; the second batch is folded whole inside that read
  const getSummaries = store.getSummaries.bind(store)
  let inner: Promise<void> | undefined
  store.getSummaries = async (p, hks) => {
    store.getSummaries = getSummaries
    inner = fold(['x', 'y', 'z'].map((s, i) => event(s, start + 10_000 + i, { path: `/second/${s}` })))
    await inner
    return getSummaries(p, hks)
  }
  await fold([event('a', start + 60_000, { path: '/a/next' }), ...['b', 'c'].map((s, i) => event(s, start + 20_000 + i, { path: `/first/${s}` }))])
  await inner
  t.ok(inner, 'the second batch was folded inside the first one\'s store read')
  await task.snapshot()
  const sessions = ['a', 'b', 'c', 'x', 'y', 'z']
  const stored = await store.getSummaries(0, sessions.map(hk))
  t.same(stored.map((s) => s?.exit_page), ['/a/next', '/first/b', '/first/c', '/second/x', '/second/y', '/second/z'], 'each session has its own event\'s page')
  t.equal(stored[0]?.entry_page, '/landing')
})
