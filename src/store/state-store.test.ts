import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { GoalIndex, PartitionState } from '../stream/index.js'
import { hashKey } from '../sketch/index.js'
import type { LoggedEvent } from '../schema/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { hourKey } from '../goals/index.js'
import { StateStore, type Op } from './state-store.js'
import { MAX_DELTAS } from './day-layout.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)
const SITE = { timezone: 'UTC' }
const ev = (i: number): LoggedEvent =>
  ({ type: 'pageview', site_id: 'shop', session_id: `s${i}`, visitor_id: `v${i}`, path: `/p/${i}`, ts: T0 + i, received_at: T0, user_agent: `UA ${i % 7}` })

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

/** an empty store in a directory of its own, removed after the test */
async function emptyStore(t: Test): Promise<{ dir: string; store: StateStore }> {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-store-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { dir, store: await StateStore.open(dir) }
}

t.test('a snapshot through the chained batch stores every summary as it was, in the binary encoding', async (t) => {
  const { dir, store } = await emptyStore(t)
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
  const value = (await raw.values({ gt: 's!2!', lt: 's!2!\xff', limit: 1 }).all())[0]
  t.equal(value[0], 1, 'version byte, not JSON')
  await raw.close()
})

t.test('a sink that keeps the operations gets values of their own', async (t) => {
  const { store } = await emptyStore(t)
  const { state } = folded(50)
  const ops: Op[] = []
  await store.encodeSnapshot(state, state.takeDirty(), [], new Map(), (op) => ops.push(op))
  const values = ops.filter((op) => op.key.startsWith('s!')).map((op) => (op as { value: Buffer }).value.toString('latin1'))
  t.equal(new Set(values).size, 50, '50 distinct summary values')
  await store.write(ops)
  await store.close()
})

/** the day of T0, which every conversion below falls on */
const DAY = Math.floor(T0 / 86_400_000)

/** conversions of `n` sessions from `from` on, all on DAY, into a partition's goal "g" */
function convert(state: PartitionState, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    const { hi, lo } = hash64(`shop\u0000c${i}`)
    state.recordConversion('g', hi, lo, DAY, T0 + i)
  }
}

/** partition 2 as a restart finds it: the store opened again and the partition loaded */
async function reopened(dir: string): Promise<{ store: StateStore; state: PartitionState }> {
  const store = await StateStore.open(dir)
  const state = new PartitionState(2, 16)
  await store.loadPartition(state)
  return { store, state }
}

async function snapshot(store: StateStore, state: PartitionState): Promise<void> {
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)
}

/** the stored keys under a prefix */
const keysOf = async (dir: string, prefix: string): Promise<string[]> => {
  const raw = new Level<string, Buffer>(dir, { valueEncoding: 'buffer' })
  const keys = await raw.keys({ gt: prefix, lt: `${prefix}\xff` }).all()
  await raw.close()
  return keys
}
const goalKeys = (dir: string): Promise<string[]> => keysOf(dir, 'g!2!')

/** Takes a snapshot of the partition's changes, writes it, and answers the values it put under `<kind>!` keys. */
async function snapshotPuts(store: StateStore, state: PartitionState, kind: string): Promise<{ key: string; value: Buffer }[]> {
  const ops: Op[] = []
  await store.encodeSnapshot(state, state.takeDirty(), [], new Map(), (op) => ops.push(op))
  await store.write(ops)
  return ops.filter((op) => op.key.startsWith(`${kind}!`) && op.type === 'put') as { key: string; value: Buffer }[]
}

/**
 * `rounds` snapshots, each after `change(k)`: each must put exactly one key of `kind`, a delta
 * (its key matching `key`). Returns the deltas' sizes.
 */
async function deltaSizes(t: Test, store: StateStore, state: PartitionState, kind: string, key: RegExp, rounds: number, change: (k: number) => void): Promise<number[]> {
  const sizes: number[] = []
  for (let k = 0; k < rounds; k++) {
    change(k)
    const puts = await snapshotPuts(store, state, kind)
    t.equal(puts.length, 1)
    t.match(puts[0].key, key, 'a delta key')
    sizes.push(puts[0].value.length)
  }
  return sizes
}

t.test('a goal day is written whole, then as deltas of what changed, whole again as it doubles; a restore joins them', async (t) => {
  const opened = await emptyStore(t)
  const { dir } = opened
  let { store } = opened
  const state = new PartitionState(2, 16)
  convert(state, 0, 1000)
  await snapshot(store, state)
  // 100 new conversions a snapshot: small next to the day, so deltas
  const sizes = await deltaSizes(t, store, state, 'g', /^g!2!g!\d{6}!\d{10}$/, 5, (k) => {
    convert(state, 1000 + 100 * k, 100)
    // a session converting again earlier that day changes its entry: the delta carries it
    const { hi, lo } = hash64('shop\u0000c7')
    state.recordConversion('g', hi, lo, DAY, T0 - 1000 - k)
  })
  t.ok(sizes.every((s) => s < 101 * 12 + 64), `each delta holds only what changed (${sizes.join(', ')} bytes), not the 1000+ sessions of the day`)
  await store.close()
  t.equal((await goalKeys(dir)).length, 6, 'the base and five deltas')

  const restart = await reopened(dir)
  store = restart.store
  const back = restart.state
  t.equal(back.goals.get('g')!.conversions(DAY, DAY), 1500, 'the restored day holds every conversion once')
  const { hi, lo } = hash64('shop\u0000c7')
  t.equal(back.goals.get('g')!.dayMap(DAY)!.get(hi, lo), state.goals.get('g')!.dayMap(DAY)!.get(hi, lo), 'a changed entry restores to its latest value')
  const triples = (m: { forEach(fn: (hi: number, lo: number, v: number) => void): void }) => {
    const out: string[] = []
    m.forEach((hi, lo, v) => out.push(`${hi}:${lo}:${v}`))
    return out.sort()
  }
  t.same(triples(back.goals.get('g')!.dayMap(DAY)!), triples(state.goals.get('g')!.dayMap(DAY)!), 'the joined day equals the one in memory')

  // a restored layout goes on: once the deltas hold as much as the base, the day is written whole
  convert(back, 2000, 1600)
  await snapshot(store, back)
  await store.close()
  t.same(await goalKeys(dir), [`g!2!g!${String(DAY).padStart(6, '0')}`], 'written whole again, its deltas deleted')
})

t.test('a goal day large enough to be encoded in slices: what the fold adds meanwhile is written by the next snapshot', async (t) => {
  const opened = await emptyStore(t)
  const { dir, store } = opened
  const state = new PartitionState(2, 16)
  convert(state, 0, 60_000)
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  let done = false
  const encoding = store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true).then(() => (done = true))
  // the fold goes on while the day is encoded: new sessions, and an earlier time for one already in
  let meanwhile = 0
  while (!done) {
    convert(state, 60_000 + meanwhile, 100)
    meanwhile += 100
    const { hi, lo } = hash64('shop\u0000c9')
    state.recordConversion('g', hi, lo, DAY, T0 - meanwhile)
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  await encoding
  await batch.commit()
  state.written(dirty)
  t.ok(meanwhile > 0, `${meanwhile} conversions folded while the day was encoded`)
  await snapshot(store, state)
  await store.close()
  const restart = await reopened(dir)
  t.teardown(() => restart.store.close())
  const back = restart.state.goals.get('g')!
  t.equal(back.conversions(DAY, DAY), 60_000 + meanwhile, 'every conversion, once')
  const { hi, lo } = hash64('shop\u0000c9')
  t.equal(back.dayMap(DAY)!.get(hi, lo), state.goals.get('g')!.dayMap(DAY)!.get(hi, lo), 'the earliest time')
})

t.test('a goal deleted while its large day is encoded is not written back', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convert(state, 0, 60_000)
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  const encoding = store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  state.dropGoal('g')
  await encoding
  await batch.commit()
  await store.close()
  t.same(await goalKeys(dir), [], 'no day of the deleted goal')
})

t.test('a day is rewritten whole after MAX_DELTAS deltas, so a restore reads a bounded number of parts', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convert(state, 0, 10_000)
  await snapshot(store, state)
  const snapshots = MAX_DELTAS + 8
  for (let k = 0; k < snapshots; k++) {
    convert(state, 10_000 + k, 1)
    await snapshot(store, state)
  }
  await store.close()
  const keys = await goalKeys(dir)
  t.ok(keys.length <= MAX_DELTAS + 1, `${keys.length} keys after ${snapshots} small snapshots (the base and at most ${MAX_DELTAS} deltas)`)
  t.ok(keys.length < snapshots, 'written whole on the way')
  const { store: again, state: back } = await reopened(dir)
  t.equal(back.goals.get('g')!.conversions(DAY, DAY), 10_000 + snapshots)
  await again.close()
})

t.test('a failed snapshot loses no change of a goal day: the next one writes it', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convert(state, 0, 1000)
  await snapshot(store, state)
  convert(state, 1000, 10)
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.discard()
  state.restoreDirty(dirty)
  state.written(dirty)
  convert(state, 1010, 10)
  await snapshot(store, state)
  await store.close()
  const { store: again, state: back } = await reopened(dir)
  t.equal(back.goals.get('g')!.conversions(DAY, DAY), 1020, 'the discarded delta\'s sessions came with the next one')
  await again.close()
})

t.test('retention deletes a goal day with its deltas', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convert(state, 0, 1000)
  await snapshot(store, state)
  convert(state, 1000, 10)
  await snapshot(store, state)
  const dropped = state.dropBefore('shop', ['g'], DAY + 1)
  t.same(dropped.goalDays, [['g', DAY]])
  await store.write(await store.deleteDaysOps(2, 'shop', dropped))
  await store.close()
  t.same(await goalKeys(dir), [], 'base and delta gone')
})

/** the hour of T0 (12:00 UTC) as a goal's hours are keyed */
const HOUR = hourKey(DAY, 12)

/** conversions of `n` sessions from `from` on, all in HOUR (and DAY), into goal "g" */
function convertInHour(state: PartitionState, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    const { hi, lo } = hash64(`shop\u0000c${i}`)
    state.recordConversion('g', hi, lo, DAY, T0 + i, undefined, HOUR)
  }
}

const hourKeys = (dir: string): Promise<string[]> => keysOf(dir, 'q!2!')

t.test('a goal hour is written as deltas of its new sessions, whole again as it doubles; a restore joins them', async (t) => {
  const opened = await emptyStore(t)
  const { dir } = opened
  let { store } = opened
  const state = new PartitionState(2, 16)
  convertInHour(state, 0, 1000)
  await snapshot(store, state)
  const sizes = await deltaSizes(t, store, state, 'q', /^q!2!g!\d{8}!\d{10}$/, 5, (k) => convertInHour(state, 1000 + 100 * k, 100))
  t.ok(sizes.every((s) => s < 100 * 12 + 64), `each delta holds only the hour's new sessions (${sizes.join(', ')} bytes), not its 1000+`)
  await store.close()
  t.equal((await hourKeys(dir)).length, 6, 'the base and five deltas')

  const restart = await reopened(dir)
  store = restart.store
  const back = restart.state
  t.equal(back.goals.get('g')!.hourConversions(HOUR), 1500, 'the restored hour holds every session once')
  t.equal(back.goals.get('g')!.hourConversions(HOUR), state.goals.get('g')!.hourConversions(HOUR))

  convertInHour(back, 2000, 1600)
  await snapshot(store, back)
  await store.close()
  t.same(await hourKeys(dir), [`q!2!g!${String(HOUR).padStart(8, '0')}`], 'written whole again, its deltas deleted')
  const last = await reopened(dir)
  t.equal(last.state.goals.get('g')!.hourConversions(HOUR), 3100)
  await last.store.close()
})

t.test('a failed snapshot loses no session of a goal hour: the next one writes it', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convertInHour(state, 0, 1000)
  await snapshot(store, state)
  convertInHour(state, 1000, 20)
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.discard()
  state.restoreDirty(dirty)
  state.written(dirty)
  await snapshot(store, state)
  await store.close()
  const back = await reopened(dir)
  t.equal(back.state.goals.get('g')!.hourConversions(HOUR), 1020, 'the discarded delta\'s sessions came with the next one')
  await back.store.close()
})

t.test('retention deletes a goal hour with its deltas', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convertInHour(state, 0, 1000)
  await snapshot(store, state)
  convertInHour(state, 1000, 10)
  await snapshot(store, state)
  const dropped = state.dropBefore('shop', ['g'], DAY - 30, hourKey(DAY + 1, 0))
  t.same(dropped.goalHours, [['g', HOUR]])
  t.same(dropped.goalDays, [], 'the day stays')
  await store.write(await store.deleteDaysOps(2, 'shop', dropped))
  await store.close()
  t.same(await hourKeys(dir), [], 'base and delta gone')
  t.equal((await goalKeys(dir)).length, 2, 'the day\'s base and delta stay')
})

/** sessions c<from>… converting goal "g" on the day before DAY and on DAY: each in the multi-day index */
function convertTwoDays(state: PartitionState, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    const { hi, lo } = hash64(`shop\u0000c${i}`)
    state.recordConversion('g', hi, lo, DAY - 1, T0 - 86_400_000 + i)
    state.recordConversion('g', hi, lo, DAY, T0 + i)
  }
}

const multiDayOf = (state: PartitionState): string[] =>
  state.goals.get('g')!.multiDayEntries().map((e) => `${e.hi}:${e.lo}:${e.days.join(',')}`).sort()

t.test('a multi-day index is written as deltas of the sessions it changed; a restore joins them; retention writes it whole', async (t) => {
  const opened = await emptyStore(t)
  const { dir } = opened
  let { store } = opened
  const state = new PartitionState(2, 16)
  convertTwoDays(state, 0, 1000)
  await snapshot(store, state)
  const sizes = await deltaSizes(t, store, state, 'm', /^m!2!g!\d{10}$/, 3, (k) => convertTwoDays(state, 1000 + 10 * k, 10))
  t.ok(sizes.every((s) => s < 10 * 40 + 64), `each delta holds the 10 sessions it changed (${sizes.join(', ')} bytes), not the index's 1000+`)
  await store.close()
  t.equal((await keysOf(dir, 'm!2!')).length, 4, 'the base and three deltas')

  const restart = await reopened(dir)
  store = restart.store
  t.equal(restart.state.goals.get('g')!.multiDayCount, 1030)
  t.same(multiDayOf(restart.state), multiDayOf(state), 'the joined index equals the one in memory')
  t.equal(restart.state.goals.get('g')!.conversions(DAY - 1, DAY), 1030, 'each two-day session counts once')

  // retention drops the day before: each session keeps one day (it stays indexed: see
  // MultiDayIndex), and only a whole write says the dropped days are gone
  const dropped = restart.state.dropBefore('shop', ['g'], DAY)
  await store.write(await store.deleteDaysOps(2, 'shop', dropped))
  await snapshot(store, restart.state)
  await store.close()
  t.same(await keysOf(dir, 'm!2!'), ['m!2!g'], 'written whole, its deltas deleted')
  const last = await reopened(dir)
  t.same(multiDayOf(last.state), multiDayOf(restart.state), 'the restored index is the one in memory')
  t.ok(last.state.goals.get('g')!.multiDayEntries().every((e) => e.days.join() === String(DAY)), 'on the held day only')
  t.equal(last.state.goals.get('g')!.conversions(DAY - 1, DAY), 1030)
  await last.store.close()
})

/** sessions c<from>… completing goal "g" twice on DAY: each with further completion times */
function convertTwice(state: PartitionState, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    const { hi, lo } = hash64(`shop\u0000c${i}`)
    state.recordConversion('g', hi, lo, DAY, T0 + i)
    state.recordConversion('g', hi, lo, DAY, T0 + 60_000 + i)
  }
}

const timesOf = (state: PartitionState): string[] => {
  const out: string[] = []
  state.goals.get('g')!.timesOf(DAY)?.forEach((hi, lo, times) => out.push(`${hi}:${lo}:${times.join(',')}`))
  return out.sort()
}

t.test('completion times are written as deltas of the sessions they changed; a restore joins them; retention deletes them all', async (t) => {
  const opened = await emptyStore(t)
  const { dir } = opened
  let { store } = opened
  const state = new PartitionState(2, 16)
  convertTwice(state, 0, 1000)
  await snapshot(store, state)
  const sizes = await deltaSizes(t, store, state, 'x', /^x!2!g!\d{6}!\d{10}$/, 3, (k) => {
    convertTwice(state, 1000 + 10 * k, 10)
    // a session of the base completes a third time: the delta carries its times
    const { hi, lo } = hash64(`shop\u0000c${k}`)
    state.recordConversion('g', hi, lo, DAY, T0 + 120_000 + k)
  })
  for (const size of sizes) t.ok(size < 11 * 40 + 64, `the delta holds the 11 sessions it changed (${size} bytes)`)
  await store.close()
  t.equal((await keysOf(dir, 'x!2!')).length, 4, 'the base and three deltas')

  const restart = await reopened(dir)
  store = restart.store
  t.same(timesOf(restart.state), timesOf(state), 'the joined times equal the ones in memory')
  t.equal(timesOf(state).length, 1030)

  const dropped = restart.state.dropBefore('shop', ['g'], DAY + 1)
  await store.write(await store.deleteDaysOps(2, 'shop', dropped))
  await store.close()
  t.same(await keysOf(dir, 'x!2!'), [], 'base and deltas gone with their day')
})

t.test('a multi-day index written whole by a snapshot that failed: parts it was to delete outlive it, and a restore trims their dropped days', async (t) => {
  const opened = await emptyStore(t)
  const { dir } = opened
  let { store } = opened
  const state = new PartitionState(2, 16)
  convertTwoDays(state, 0, 1000)
  await snapshot(store, state)
  convertTwoDays(state, 1000, 10)
  await snapshot(store, state)
  const dropped = state.dropBefore('shop', ['g'], DAY)
  await store.write(await store.deleteDaysOps(2, 'shop', dropped))
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.discard()
  state.restoreDirty(dirty)
  state.written(dirty)
  await snapshot(store, state)
  await store.close()
  t.equal((await keysOf(dir, 'm!2!')).length, 2, 'the whole index and the delta the failed snapshot was to delete')
  const back = await reopened(dir)
  store = back.store
  t.equal(back.state.goals.get('g')!.multiDayCount, 1010)
  t.ok(back.state.goals.get('g')!.multiDayEntries().every((e) => e.days.join() === String(DAY)), 'the left delta\'s dropped day is not back')
  t.equal(back.state.goals.get('g')!.conversions(DAY - 1, DAY), 1010)
  await store.close()
})

t.test('a snapshot of a linked state marks it so; a restore trusts the mark, and only the mark', async (t) => {
  const { dir, store } = await emptyStore(t)
  const state = new PartitionState(2, 16)
  convertTwoDays(state, 0, 10)
  // not linked yet (a restored state of an older build, its pass still running)
  await snapshot(store, state)
  await store.close()
  t.same(await keysOf(dir, 'a!2!'), [], 'no mark')
  const before = await reopened(dir)
  t.equal(before.state.linkedAcross, false, 'restored without the mark: to be linked')
  // the mark goes with the keys taken while linked, in the same batch
  before.state.linkedAcross = true
  convertTwoDays(before.state, 10, 10)
  const dirty = before.state.takeDirty()
  before.state.linkedAcross = false
  const batch = before.store.openBatch()
  await before.store.encodeSnapshot(before.state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  await before.store.close()
  t.same(await keysOf(dir, 'a!2!'), ['a!2!linked'], 'marked: linked when its keys were taken')
  const after = await reopened(dir)
  t.equal(after.state.linkedAcross, true, 'restored linked')
  await after.store.close()
  const empty = await emptyStore(t)
  const fresh = new PartitionState(2, 16)
  await empty.store.loadPartition(fresh)
  t.equal(fresh.linkedAcross, true, 'an empty store has nothing to link')
  await empty.store.close()
})

t.test('a large write is handed over in slices and stays all or nothing', async (t) => {
  const put = (i: number): Op => ({ type: 'put', key: `z!2!${String(i).padStart(6, '0')}`, value: Buffer.from(`v${i}`) })
  const ops = Array.from({ length: 20_000 }, (_, i) => put(i))
  const failed = await emptyStore(t)
  // a bad operation after thousands of good ones, in a later slice than theirs
  await t.rejects(failed.store.write([...ops, { type: 'put', key: undefined, value: Buffer.from('x') } as unknown as Op]), 'a write with a bad operation fails')
  await failed.store.close()
  t.same(await keysOf(failed.dir, 'z!2!'), [], 'and stores nothing of it')
  const good = await emptyStore(t)
  await good.store.write(ops)
  await good.store.close()
  const keys = await keysOf(good.dir, 'z!2!')
  t.equal(keys.length, 20_000, 'a good write stores every operation')
  t.equal(keys[19_999], 'z!2!019999', 'the last one too')
})
