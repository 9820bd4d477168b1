import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { GoalIndex, PartitionState, hashKey } from '../stream/index.js'
import type { LoggedEvent } from '../schema/event.js'
import { hash64, initHash } from '../sketch/index.js'
import { StateStore, type Op } from './state-store.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)
const SITE = { timezone: 'UTC' }
const ev = (i: number): LoggedEvent =>
  ({ type: 'pageview', site_id: 'shop', session_id: `s${i}`, visitor_id: `v${i}`, path: `/p/${i}`, ts: T0 + i, received_at: T0, user_agent: `UA ${i % 7}` }) as LoggedEvent

function folded(n: number): { state: PartitionState; hks: string[] } {
  const state = new PartitionState(2, 16)
  const hks: string[] = []
  const goals = new GoalIndex()
  for (let i = 0; i < n; i++) {
    const { hi, lo } = hash64(`shop\u0000s${i}`)
    state.fold(ev(i), hi, lo, SITE, goals)
    hks.push(hashKey(hi, lo))
  }
  return { state, hks }
}

t.test('a snapshot through the chained batch stores every summary as it was, in the binary encoding', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-store-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = await StateStore.open(dir)
  const { state, hks } = folded(2500)
  const expected = hks.map((hk) => state.summaries.get(hk)!)
  const dirty = state.takeDirty()
  t.equal(dirty.summaries.length, 2500)
  const batch = store.openBatch()
  // the sink copies: every summary is encoded into the same reused buffer
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)
  const back = await store.getSummaries(2, hks)
  t.same(back, expected, 'each value is its own summary, none overwritten by a later one')
  t.equal(state.evictOver(0), 0, 'written: every summary may leave memory')
  await store.close()

  const raw = new Level<string, Buffer>(dir, { valueEncoding: 'buffer' })
  const value = (await raw.values({ gt: 's!2!', lt: 's!2!\xff', limit: 1 }).all())[0]!
  t.equal(value[0], 1, 'version byte, not JSON')
  await raw.close()
})

t.test('a sink that keeps the operations gets values of their own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-store-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = await StateStore.open(dir)
  const { state } = folded(50)
  const ops: Op[] = []
  await store.encodeSnapshot(state, state.takeDirty(), [], new Map(), (op) => ops.push(op))
  const values = ops.filter((op) => op.key.startsWith('s!')).map((op) => (op as { value: Buffer }).value.toString('latin1'))
  t.equal(new Set(values).size, 50, '50 distinct summary values')
  await store.write(ops)
  await store.close()
})
