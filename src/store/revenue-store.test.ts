import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GoalIndex, PartitionState } from '../stream/index.js'
import type { Goal, LoggedEvent } from '../schema/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { OTHER } from '../goals/index.js'
import { StateStore, type Op } from './state-store.js'
import { decodeRevenueDay, encodeRevenueDay } from './snapshot-v1.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)
const DAY = Math.floor(T0 / 86_400_000)
const SITE = { timezone: 'UTC' }
const goal: Goal = { id: 'g', site_id: 'shop', name: 'Buy', goal_type: 'custom_event', match_event: 'buy', currency: 'EUR', created_at: new Date(T0).toISOString() }

async function emptyStore(t: Test): Promise<{ dir: string; store: StateStore }> {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-revenue-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { dir, store: await StateStore.open(dir) }
}

const buy = (session: string, amount: string, currency: string, extra: Partial<LoggedEvent> = {}): LoggedEvent =>
  ({ type: 'custom_event', event_name: 'buy', site_id: 'shop', session_id: session, ts: T0, received_at: T0, revenue: { amount, currency }, ...extra })

function fold(state: PartitionState, events: LoggedEvent[], firstOffset = 0): void {
  const goals = new GoalIndex()
  goals.add(goal)
  events.forEach((e, i) => {
    const { hi, lo } = hash64(`shop\u0000${e.session_id}`)
    state.fold(e, hi, lo, SITE, goals, firstOffset + i)
  })
}

async function snapshot(store: StateStore, state: PartitionState): Promise<Op[]> {
  const ops: Op[] = []
  const dirty = state.takeDirty()
  await store.encodeSnapshot(state, dirty, [], new Map(), (op) => ops.push(op))
  await store.write(ops)
  state.written(dirty)
  return ops
}

t.test('the revenue-day record round-trips amounts beyond 2^53 and other-currency marks', async (t) => {
  const entries: [string, bigint][] = [['a', 9_999_999_999_999_999n], ['bé', OTHER], ['c', 0n]]
  t.same(decodeRevenueDay(encodeRevenueDay(entries)), entries)
  const buf = encodeRevenueDay(entries)
  t.equal(buf[0], 1, 'version')
  t.equal(buf[1], 6, 'kind')
  t.throws(() => decodeRevenueDay(buf.subarray(0, buf.length - 1)), /truncated/)
})

t.test('revenue is snapshotted, restored, and joins with a replay of the same events', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(1, 16)
  const events = [
    buy('s1', '49.90', 'EUR', { event_id: 'o1' }),
    buy('s1', '49.90', 'EUR', { event_id: 'o1' }),
    buy('s2', '10', 'EUR'),
    buy('s3', '5', 'USD'),
  ]
  fold(state, events)
  t.same(state.revenue.get('g')!.totals(DAY, DAY), { total: 599_000n, events: 2, other: 1 })
  const ops = await snapshot(store, state)
  t.ok(ops.some((op) => op.key === `r!1!g!${String(DAY).padStart(6, '0')}`), 'an r! key, so the changelog carries it')
  await store.close()

  const again = await StateStore.open(dir)
  const restored = new PartitionState(1, 16)
  await again.loadPartition(restored)
  t.same(restored.revenue.get('g')!.totals(DAY, DAY), { total: 599_000n, events: 2, other: 1 }, 'restored')
  fold(restored, events)
  t.same(restored.revenue.get('g')!.totals(DAY, DAY), { total: 599_000n, events: 2, other: 1 }, 'replayed from the same offsets: nothing counts twice')
  fold(restored, [buy('s2', '10', 'EUR')], 100)
  t.same(restored.revenue.get('g')!.totals(DAY, DAY), { total: 699_000n, events: 3, other: 1 }, 'a new event without an id counts')

  const dropped = restored.dropBefore('shop', ['g'], DAY + 1)
  t.same(dropped.revenueDays, [['g', DAY]])
  await again.write(await again.deleteDaysOps(1, 'shop', dropped))
  const fresh = new PartitionState(1, 16)
  await again.loadPartition(fresh)
  t.equal(fresh.revenue.get('g'), undefined, 'retention removed the day')
  await again.close()
})

t.test('deleting a goal and clearing a site remove its revenue', async (t) => {
  const { store } = await emptyStore(t)
  const state = new PartitionState(1, 16)
  fold(state, [buy('s1', '1', 'EUR')])
  await snapshot(store, state)
  t.ok((await store.deleteGoalOps('g', 1)).some((op) => op.key.startsWith('r!1!g!')))
  t.ok((await store.clearSiteOps('shop', ['g'], 1)).some((op) => op.key.startsWith('r!1!g!')))
  state.clearSite('shop', ['g'])
  t.equal(state.revenue.get('g')!.size, 0)
  state.dropGoal('g')
  t.equal(state.revenue.get('g'), undefined)
  await store.close()
})

t.test('goals without a currency keep no revenue; conditions decide which goals an event completes', async (t) => {
  const state = new PartitionState(1, 16)
  const goals = new GoalIndex()
  goals.add({ ...goal, id: 'plain', currency: undefined })
  goals.add({ ...goal, id: 'pro', match_properties: [{ key: 'plan', op: 'is', values: ['pro'] }] })
  goals.add({ ...goal, id: 'pay', match_event: 'payment', currency: 'USD' })
  const at = (e: LoggedEvent, i: number) => {
    const { hi, lo } = hash64(`shop\u0000${e.session_id}`)
    state.fold(e, hi, lo, SITE, goals, i)
  }
  at(buy('a', '3', 'EUR', { properties: { plan: 'pro' } }), 0)
  at(buy('b', '4', 'EUR', { properties: { plan: 'free' } }), 1)
  at({ type: 'payment', site_id: 'shop', session_id: 'c', ts: T0, received_at: T0, revenue: { amount: 7.5, currency: 'USD' } }, 2)
  t.equal(state.revenue.get('plain'), undefined)
  t.same(state.revenue.get('pro')!.totals(DAY, DAY), { total: 30_000n, events: 1, other: 0 })
  t.same(state.revenue.get('pay')!.totals(DAY, DAY), { total: 75_000n, events: 1, other: 0 }, 'payments complete event goals named payment')
  t.equal(state.goals.get('plain')!.conversions(DAY, DAY), 2)
  t.equal(state.goals.get('pro')!.conversions(DAY, DAY), 1)
})
