import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BreakdownDimension, LoggedEvent } from '../schema/index.js'
import { eventKey } from '../schema/index.js'
import { GoalIndex, PartitionState, tallyValues } from '../stream/index.js'
import { StateStore } from '../store/index.js'
import { TALLY_PART_BITS, dayOf } from '../goals/index.js'
import { hash64, hashHi, hashKey, hashLo, hashPart, initHash } from '../sketch/index.js'
import { breakdownBody, breakdownPartial, mergeBreakdowns } from './breakdown.js'
import { warmSettledCorrections } from './counted-conversions.js'
import { Turns } from './parts.js'

t.before(initHash)

const DAY = 86_400_000
const site = { site_id: 's', domain: null, timezone: 'UTC', created_at: '2026-01-01T00:00:00Z' }
const goals = new GoalIndex()
goals.add({ id: 'buy', site_id: 's', name: 'Buy', goal_type: 'custom_event', match_event: 'buy', created_at: site.created_at })

/** sessions whose attributes are spread over events on two days, some converting */
function sessions(now: number): LoggedEvent[][] {
  const out: LoggedEvent[][] = []
  for (let i = 0; i < 30; i++) {
    const id = `v${i}`
    const at = now - DAY - 3_600_000 + i * 60_000
    const ev = (over: Partial<LoggedEvent>): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: id, ts: at, received_at: at, ...over })
    const events = [
      ev({ path: `/in${i % 3}`, referrer: i % 2 ? 'https://a.example/' : undefined, utm: i % 5 === 0 ? { source: 'mail' } : undefined }),
      ev({ ts: at + 1000, path: '/next', referrer: 'https://b.example/', country: i % 4 ? 'DE' : undefined, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0' }),
      ev({ ts: at + DAY, path: '/later', country: 'FR', utm: { source: 'late', campaign: 'c' } }),
    ]
    if (i % 3 === 0) events.push(ev({ ts: at + DAY + 5000, type: 'custom_event', event_name: 'buy' }))
    out.push(events)
  }
  return out
}

function fold(state: PartitionState, events: LoggedEvent[]): void {
  events.forEach((e, offset) => {
    const h = hash64(eventKey(e.site_id, e.session_id))
    state.fold(e, h.hi, h.lo, site, goals, offset)
  })
}

async function answer(state: PartitionState, by: 'source' | 'referrer' | 'country' | 'entry_page' | 'utm_campaign', from: number, to: number) {
  const lookup = async (_p: number, hks: string[]) => hks.map((hk) => state.summaries.get(hk))
  const partial = await breakdownPartial(state, { kind: 'breakdown', site_id: 's', goal_id: 'buy', window: { from, to }, by }, lookup)
  return breakdownBody('buy', 2, by, 10, mergeBreakdowns([partial]))
}

/** deterministic shuffles */
function shuffled<T>(list: T[], seed: number): T[] {
  const out = [...list]
  let x = seed
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    const j = x % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

t.test('a breakdown does not depend on the order the events arrived in', async (t) => {
  const now = Date.now()
  const all = sessions(now).flat()
  const today = dayOf(now, 'UTC')
  const inOrder = new PartitionState(0, 1000)
  fold(inOrder, [...all].sort((a, b) => a.ts - b.ts))
  const dims = ['source', 'referrer', 'country', 'entry_page', 'utm_campaign'] as const
  const want = new Map<string, unknown>()
  for (const by of dims) for (const [from, to] of [[today - 1, today], [today, today], [today - 1, today - 1]]) want.set(`${by}:${from}:${to}`, await answer(inOrder, by, from, to))
  t.same((want.get(`referrer:${today - 1}:${today}`) as { rows: unknown[] }).rows, [
    { value: 'a.example', sessions: 15, conversions: 5, conversion_rate: 5 / 15 },
    { value: 'b.example', sessions: 15, conversions: 5, conversion_rate: 5 / 15 },
  ], 'the earliest referrer that carries one, each session once')
  for (const seed of [1, 2, 3, 4, 5]) {
    const state = new PartitionState(0, 1000)
    fold(state, shuffled(all, seed))
    let same = true
    for (const by of dims) {
      for (const [from, to] of [[today - 1, today], [today, today], [today - 1, today - 1]]) {
        const got = await answer(state, by, from, to)
        if (JSON.stringify(got) !== JSON.stringify(want.get(`${by}:${from}:${to}`))) {
          same = false
          t.same(got, want.get(`${by}:${from}:${to}`), `order ${seed}: ${by} over ${from}..${to}`)
        }
      }
    }
    t.ok(same, `order ${seed}: every breakdown as in time order`)
  }
})

t.test('the counters survive a snapshot and a restore, and a failed snapshot writes them again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-breakdown-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const store = await StateStore.open(dir)
  t.teardown(() => store.close())
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const state = new PartitionState(0, 1000)
  const rest = sessions(now)
  // a session whose every value is its own: only the failed snapshot's marks could ever write them
  const at = now - DAY
  const solo = (over: Partial<LoggedEvent>): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: 'solo', ts: at, received_at: at, ...over })
  fold(state, [
    solo({ path: '/solo', referrer: 'https://solo.example/', utm: { source: 'solo' }, country: 'JP', user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile Safari/604.1' }),
    solo({ ts: at + 1000, type: 'custom_event', event_name: 'buy' }),
  ])
  // a snapshot that fails: its counters must be written by the next one
  const failed = state.takeDirty()
  await store.encodeSnapshot(state, failed, [], new Map(), () => undefined)
  state.restoreDirty(failed)
  state.written(failed)
  fold(state, rest.flat())
  t.match(JSON.stringify(await answer(state, 'source', today - 1, today)), /"value":"solo","sessions":1,"conversions":1/, 'the session of its own')
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)

  const restored = new PartitionState(0, 1000)
  await store.loadPartition(restored)
  // the restored state has no summaries in memory: its sessions' attributes come from the store
  const lookup = async (_p: number, hks: string[]) => store.getSummaries(0, hks)
  for (const by of ['source', 'country', 'entry_page'] as const) {
    const q = { kind: 'breakdown' as const, site_id: 's', goal_id: 'buy', window: { from: today - 1, to: today }, by }
    const before = await breakdownPartial(state, q, async (_p, hks) => hks.map((hk) => state.summaries.get(hk)))
    const after = await breakdownPartial(restored, q, lookup)
    t.same(breakdownBody('buy', 2, by, 10, after), breakdownBody('buy', 2, by, 10, before), by)
  }
  const h = hash64(eventKey('s', 'v0'))
  t.ok(state.summaries.get(hashKey(h.hi, h.lo)), 'the live state kept its summaries')
})

/** a store in a scratch folder, closed and removed after the test */
async function scratchStore(t: Test): Promise<StateStore> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-breakdown-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const store = await StateStore.open(dir)
  t.teardown(() => store.close())
  return store
}

/** Writes a snapshot of `state` into `store`; `between` runs after its keys are taken, before they are written. */
async function snapshotInto(store: StateStore, state: PartitionState, o: { storeTallies?: boolean; between?: () => void } = {}): Promise<void> {
  const taken = state.takeDirty()
  // without the counts by value, as an older build's snapshot: the restore counts them
  const dirty = o.storeTallies === false ? { ...taken, tallies: undefined } : taken
  o.between?.()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)
}

/** summaries as the API finds them: in memory, else in the store */
const lookupIn = (state: PartitionState, store?: StateStore) => async (_p: number, hks: string[]) => {
  const out = hks.map((hk) => state.summaries.get(hk))
  if (store === undefined) return out
  const stored = await store.getSummaries(0, hks.filter((_, i) => out[i] === undefined))
  let j = 0
  return out.map((x) => x ?? stored[j++])
}

/** Folds an event into a restored state as a partition task does: its session's stored summary loaded first. */
async function foldLoaded(state: PartitionState, store: StateStore, e: LoggedEvent, offset?: number): Promise<void> {
  const h = hash64(eventKey(e.site_id, e.session_id))
  const hk = hashKey(h.hi, h.lo)
  if (!state.summaries.has(hk)) {
    const [stored] = await store.getSummaries(0, [hk])
    if (stored && !state.summaries.has(hk)) state.summaries.set(hk, stored)
  }
  state.fold(e, h.hi, h.lo, site, goals, offset)
}

/**
 * Sessions on up to three days, some converting on several of them, whose earliest events (the
 * ones that fix their attributes) come in any order among the rest.
 */
function spread(now: number, n: number, seed: number, daysBack = 2): LoggedEvent[] {
  let x = seed
  const rnd = (k: number): number => {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    return x % k
  }
  const out: LoggedEvent[] = []
  const refs = ['https://a.example/', 'https://b.example/x', undefined, 'https://c.example/']
  const agents = ['Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile Safari/604.1', undefined]
  for (let i = 0; i < n; i++) {
    const id = `s${seed}-${i}`
    const start = now - (daysBack * DAY) + rnd(daysBack * DAY) - 3_600_000
    const count = 1 + rnd(5)
    for (let k = 0; k < count; k++) {
      const ts = start + rnd(k === 0 ? 1 : DAY + DAY / 2)
      const over: Partial<LoggedEvent> = rnd(3) === 0
        ? { type: 'custom_event', event_name: 'buy' }
        : { path: `/p${rnd(4)}`, referrer: refs[rnd(refs.length)], utm: rnd(4) === 0 ? { source: `u${rnd(3)}`, campaign: `c${rnd(2)}` } : undefined, country: ['DE', 'FR', undefined][rnd(3)], user_agent: agents[rnd(agents.length)] }
      out.push({ type: 'pageview', site_id: 's', session_id: id, ts: Math.min(ts, now), received_at: now, ...over })
    }
  }
  return out
}

const DIMS = ['source', 'referrer', 'country', 'entry_page', 'utm_campaign'] as const

/** the breakdown as the walk over every converted session answers it (the counts set aside) */
async function walked(state: PartitionState, by: (typeof DIMS)[number], from: number, to: number, lookup: (p: number, hks: string[]) => Promise<(ReturnType<typeof state.summaries.get>)[]>) {
  const tallies = state.tallies.get('buy')!
  const was = tallies.rebuilding
  tallies.rebuilding = true
  try {
    return breakdownBody('buy', 3, by, 10, mergeBreakdowns([await breakdownPartial(state, { kind: 'breakdown', site_id: 's', goal_id: 'buy', window: { from, to }, by }, lookup)]))
  } finally {
    tallies.rebuilding = was
  }
}

async function counted(state: PartitionState, by: BreakdownDimension, from: number, to: number, lookup: (p: number, hks: string[]) => Promise<(ReturnType<typeof state.summaries.get>)[]>) {
  return breakdownBody('buy', 3, by, 10, mergeBreakdowns([await breakdownPartial(state, { kind: 'breakdown', site_id: 's', goal_id: 'buy', window: { from, to }, by }, lookup)]))
}

t.test('conversions counted by value equal the walk over the sessions, whatever the order of the events', async (t) => {
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const events = spread(now, 400, 7)
  for (const seed of [1, 2, 3]) {
    const state = new PartitionState(0, 1000)
    fold(state, shuffled(events, seed))
    const lookup = lookupIn(state)
    t.ok(state.tallies.get('buy')!.complete([today - 2, today - 1, today]), 'the fold kept the counts')
    let several = 0
    state.goals.get('buy')!.forEachIndexed((_hi, _lo, days) => void (days.length > 1 && several++))
    t.ok(several > 10, `sessions converting on several days: ${several}`)
    for (const by of DIMS) {
      for (const [from, to] of [[today - 2, today], [today - 1, today], [today - 2, today - 1], [today, today]]) {
        t.same(await counted(state, by, from, to, lookup), await walked(state, by, from, to, lookup), `order ${seed}: ${by} over ${today - from}..${today - to} days ago`)
      }
    }
  }
})

t.test('a restored state counts its conversions by value while it folds, and ends exact', async (t) => {
  const store = await scratchStore(t)
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const events = shuffled(spread(now, 600, 11), 5)
  const half = events.length >> 1
  const first = events.slice(0, half)
  const rest = events.slice(half)
  const live = new PartitionState(0, 1000)
  fold(live, first)
  await snapshotInto(store, live, { storeTallies: false })

  const restored = new PartitionState(0, 1000)
  await store.loadPartition(restored)
  t.equal(restored.talliesOf('buy').rebuilding, true, 'a restored goal waits to be counted')
  let reads = 0
  const reader = async (hks: string[]) => {
    reads++
    // slower than the fold: several of its turns pass during each read
    for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve))
    return store.getSummaries(0, hks)
  }
  // the rest of the events fold between the count's reads, into both states
  const folding = (async () => {
    for (let i = 0; i < rest.length; i++) {
      await foldLoaded(restored, store, rest[i], half + i)
      await foldLoaded(live, store, rest[i], half + i)
      if (i % 3 === 0) await new Promise<void>((resolve) => setImmediate(resolve))
    }
  })()
  const done = await tallyValues(restored, reader)
  await folding
  t.ok(done, 'counted')
  t.ok(reads > 20, `the count read the store ${reads} times, the fold going on between`)
  t.equal(restored.tallies.get('buy')!.rebuilding, false)
  const fromStore = lookupIn(restored, store)
  const fromLive = lookupIn(live)
  for (const by of DIMS) {
    for (const [from, to] of [[today - 2, today], [today - 1, today - 1]]) {
      const want = await counted(live, by, from, to, fromLive)
      t.same(await counted(restored, by, from, to, fromStore), want, `${by} over ${today - from}..${today - to} days ago, as the state that never stopped`)
      t.same(await walked(restored, by, from, to, fromStore), want, `${by}: the walk agrees`)
    }
  }
})

t.test('a session converting in the part being counted, while its summaries are read, is counted once', async (t) => {
  const store = await scratchStore(t)
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const live = new PartitionState(0, 1000)
  const buyer = (id: string, ref: string, at: number): LoggedEvent[] => [
    { type: 'pageview', site_id: 's', session_id: id, ts: at, received_at: at, path: '/', referrer: ref },
    { type: 'custom_event', site_id: 's', session_id: id, ts: at + 1, received_at: at, event_name: 'buy' },
  ]
  for (let i = 0; i < 300; i++) fold(live, buyer(`old${i}`, `https://r${i % 4}.example/`, now - 60_000))
  await snapshotInto(store, live, { storeTallies: false })
  const restored = new PartitionState(0, 1000)
  await store.loadPartition(restored)
  let n = 0
  let added = 0
  const reader = async (hks: string[]) => {
    const stored = await store.getSummaries(0, hks)
    // a new session of the same part converts meanwhile, in memory
    const part = hashPart(hashHi(hks[0]), hashLo(hks[0]), TALLY_PART_BITS)
    for (;;) {
      const id = `new${n++}`
      const h = hash64(eventKey('s', id))
      if (hashPart(h.hi, h.lo, TALLY_PART_BITS) !== part) continue
      for (const e of buyer(id, 'https://fresh.example/', now - 30_000)) {
        restored.fold(e, h.hi, h.lo, site, goals)
        live.fold(e, h.hi, h.lo, site, goals)
      }
      added++
      break
    }
    return stored
  }
  t.ok(await tallyValues(restored, reader))
  t.ok(added > 20, `${added} sessions converted during the reads`)
  const got = await counted(restored, 'referrer', today, today, lookupIn(restored, store))
  t.same(got, await counted(live, 'referrer', today, today, lookupIn(live)), 'as the state that never stopped')
  t.equal(got.rows.find((r) => r.value === 'fresh.example')?.conversions, added, 'each new session once')
})

t.test('sessions per value kept for past days follow late events and moved sessions', async (t) => {
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const events = shuffled(spread(now, 300, 23), 9)
  const asked = new PartitionState(0, 1000)
  const cut = [events.length >> 2, events.length >> 1, events.length]
  let from = 0
  for (const to of cut) {
    fold(asked, events.slice(from, to))
    from = to
    const fresh = new PartitionState(0, 1000)
    fold(fresh, events.slice(0, to))
    for (const by of ['referrer', 'country', 'entry_page'] as const) {
      // asked after every part: the kept unions of the days before today must not go stale
      t.same(await counted(asked, by, today - 2, today, lookupIn(asked)), await counted(fresh, by, today - 2, today, lookupIn(fresh)), `${by} after ${to} events`)
    }
  }
})

t.test('a session moved to another value on a past day moves in the kept sessions per value', async (t) => {
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const state = new PartitionState(0, 1000)
  const lookup = lookupIn(state)
  const at = now - DAY
  const ev = (id: string, ts: number, referrer: string): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: id, ts, received_at: now, path: '/', referrer })
  fold(state, [ev('a', at, 'https://x.example/'), ev('b', at, 'https://x.example/'), { ...ev('a', at + 5, 'https://x.example/'), type: 'custom_event', event_name: 'buy' }, ev('c', now, 'https://z.example/')])
  const before = await counted(state, 'referrer', today - 1, today, lookup)
  t.same(before.rows.map((r) => [r.value, r.sessions, r.conversions]), [['x.example', 2, 1]])
  // an earlier event of session a, from elsewhere: no new session on the day, a new referrer
  fold(state, [ev('a', at - 1000, 'https://y.example/')])
  const after = await counted(state, 'referrer', today - 1, today, lookup)
  t.same(after.rows.map((r) => [r.value, r.sessions, r.conversions]), [['y.example', 1, 1]], 'the conversion moved')
  t.same(after.other, { sessions: 2, conversions: 0 }, 'x.example keeps b, z.example c')
})

// at 16:55 UTC some sessions converting while a snapshot is written have their set stored and not
// their summary: a restore counts them without values until their events come again from the log
for (const now of [Date.now(), Date.UTC(2026, 10, 27, 16, 55)]) t.test(`a snapshot stores the counts by value only when they match the sets it stores (${new Date(now).toISOString()})`, async (t) => {
  const store = await scratchStore(t)
  const today = dayOf(now, 'UTC')
  const events = shuffled(spread(now, 400, 31), 3)
  const live = new PartitionState(0, 1000)
  const third = Math.floor(events.length / 3)
  fold(live, events.slice(0, third))
  // what folds while a snapshot is written (`between`): its sets may hold it, its counts were taken before
  const snapshot = (between?: () => void): Promise<void> => snapshotInto(store, live, { between })
  await snapshot()
  const restoredOf = async () => {
    const r = new PartitionState(0, 1000)
    await store.loadPartition(r)
    let reads = 0
    t.ok(await tallyValues(r, async (hks) => (reads++, store.getSummaries(0, hks))))
    return { r, reads }
  }
  const fromStore = (r: PartitionState) => lookupIn(r, store)
  const fromLive = lookupIn(live)
  const first = await restoredOf()
  t.equal(first.reads, 0, 'every day restored with its counts: nothing counted again')
  t.same(await counted(first.r, 'referrer', today - 2, today, fromStore(first.r)), await counted(live, 'referrer', today - 2, today, fromLive), 'as stored')
  // more sessions convert, then more again between taking the keys and writing them: the days
  // changed meanwhile may be stored with some of the later sessions, so their counts are not stored
  fold(live, events.slice(third, 2 * third))
  const later = events.slice(2 * third)
  const changedDays = new Set<number>()
  await snapshot(() => {
    for (const e of later) {
      const h = hash64(eventKey(e.site_id, e.session_id))
      const before = live.goals.get('buy')?.size ?? 0
      live.fold(e, h.hi, h.lo, site, goals)
      if ((live.goals.get('buy')?.size ?? 0) !== before) changedDays.add(dayOf(e.ts, 'UTC'))
    }
  })
  t.ok(changedDays.size > 0, 'conversions came in while the snapshot was written')
  const second = await restoredOf()
  t.ok(second.reads > 0, `the days changed meanwhile are counted again (${second.reads} reads)`)
  // the log gives the restored state what came after the snapshot's offset
  for (const e of later) await foldLoaded(second.r, store, e)
  await snapshot()
  const third_ = await restoredOf()
  t.equal(third_.reads, 0, 'the next snapshot stores them')
  for (const { r } of [second, third_]) {
    for (const by of ['referrer', 'country', 'entry_page'] as const) {
      const want = await counted(live, by, today - 2, today, fromLive)
      t.same(await counted(r, by, today - 2, today, fromStore(r)), want, `${by} as the live state`)
      t.same(await walked(r, by, today - 2, today, fromStore(r)), want, `${by}: the walk agrees`)
    }
  }
})

t.test('the kept corrections of settled days follow late events, moved sessions and new days', async (t) => {
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const events = shuffled(spread(now, 500, 41, 6), 2)
  const asked = new PartitionState(0, 1000)
  const lookup = lookupIn(asked)
  let from = 0
  let settled = 0
  for (const to of [events.length >> 2, events.length >> 1, (3 * events.length) >> 2, events.length]) {
    fold(asked, events.slice(from, to))
    from = to
    asked.goals.get('buy')?.forEachIndexed((_hi, _lo, days) => void (days.length > 1 && days[days.length - 1] <= today - 2 && settled++))
    for (const by of ['referrer', 'country', 'entry_page'] as const) {
      for (const [a, b] of [[today - 6, today], [today - 4, today]]) {
        // asked after every part: what was kept of the settled days must follow what came since
        t.same(await counted(asked, by, a, b, lookup), await walked(asked, by, a, b, lookup), `${by} over ${today - a}..0 days ago after ${to} events`)
      }
    }
  }
  t.ok(settled > 20, `sessions on several settled days: ${settled}`)
})

t.test('a settled session on several days moved to another value moves in the kept corrections', async (t) => {
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const state = new PartitionState(0, 1000)
  const lookup = lookupIn(state)
  const at = (today - 5) * DAY + 12 * 3_600_000
  const ev = (ts: number, over: Partial<LoggedEvent>): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: 'long', ts, received_at: now, path: '/', ...over })
  fold(state, [
    ev(at, { referrer: 'https://x.example/' }), ev(at + 1, { type: 'custom_event', event_name: 'buy' }),
    ev(at + DAY, { type: 'custom_event', event_name: 'buy' }),
    // another session converts today, so the days before yesterday are settled
    { ...ev(now - 1000, { referrer: 'https://z.example/' }), session_id: 'other' },
    { ...ev(now - 999, { type: 'custom_event', event_name: 'buy' }), session_id: 'other' },
  ])
  const rows = async () => (await counted(state, 'referrer', today - 6, today, lookup)).rows.map((r) => [r.value, r.conversions])
  t.same(await rows(), [['x.example', 1], ['z.example', 1]], 'one conversion, on two settled days')
  // an earlier event from elsewhere: the session's referrer changes, its days do not
  fold(state, [ev(at - 60_000, { referrer: 'https://y.example/' })])
  t.same(await rows(), [['y.example', 1], ['z.example', 1]], 'moved, and still one')
})

t.test('the warming pass keeps every attribute\'s settled corrections, and none that changed while it ran', async (t) => {
  const store = await scratchStore(t)
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const events = shuffled(spread(now, 600, 53, 6), 3)
  const half = events.length >> 1
  const live = new PartitionState(0, 1000)
  fold(live, events.slice(0, half))
  await snapshotInto(store, live)
  const restored = new PartitionState(0, 1000)
  await store.loadPartition(restored)
  t.ok(await tallyValues(restored, (hks) => store.getSummaries(0, hks)), 'counted by value')
  const fromStore = lookupIn(restored, store)
  const [from, to] = [today - 6, today]
  // asked once: the warming pass keeps this goal's corrections ready from now on
  t.same(await counted(restored, 'referrer', from, to, fromStore), await counted(live, 'referrer', from, to, lookupIn(live)))
  // the rest of the events (late ones among them) fold while the pass reads the store
  const forget = () => restored.goals.get('buy')!.forEachIndexed((hi, lo) => restored.coldAttributes.passed(hi, lo))
  forget()
  let reads = 0
  const folding = async (p: number, hks: string[]) => {
    if (reads++ === 0) {
      for (let i = half; i < events.length; i++) {
        await foldLoaded(restored, store, events[i], i)
        fold(live, [events[i]])
      }
    }
    return fromStore(p, hks)
  }
  await warmSettledCorrections(restored, ['buy'], { from, to }, folding, new Turns(0))
  t.ok(reads > 0, 'the pass read the store')
  for (const by of DIMS) t.same(await counted(restored, by, from, to, fromStore), await walked(restored, by, from, to, fromStore), `${by} after a pass during the folds`)

  // a pass with nothing folding keeps them all: the attributes not asked yet then answer without
  // reading a settled session again, even when none is known any more
  await warmSettledCorrections(restored, ['buy'], { from, to }, fromStore)
  let settledRead = 0
  const settled = new Set<string>()
  restored.goals.get('buy')!.forEachIndexed((hi, lo, days) => {
    restored.coldAttributes.passed(hi, lo)
    if (days[days.length - 1] <= today - 2 && days.filter((d) => d >= from).length > 1) settled.add(hashKey(hi, lo))
  })
  t.ok(settled.size > 20, `sessions on several settled days: ${settled.size}`)
  const counting = async (p: number, hks: string[]) => {
    settledRead += hks.filter((hk) => settled.has(hk)).length
    return fromStore(p, hks)
  }
  for (const by of ['utm_source', 'utm_medium', 'device', 'browser', 'os'] as const) {
    t.same(await counted(restored, by, from, to, counting), await counted(live, by, from, to, lookupIn(live)), `${by} as the state that never stopped`)
  }
  t.equal(settledRead, 0, 'no settled session read again')
})
