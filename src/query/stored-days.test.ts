// Settled days whose sets left memory for the store: every answer stays the one a node that kept
// them all gives. Two partition tasks fold the same shuffled events of ten days, old-timestamped
// and late ones among them; one lets its settled days go between batches (with snapshots of every
// size between), the other never does.
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedLog, EmbeddedConfigLog } from '../log/index.js'
import { Catalog } from '../catalog/index.js'
import { StateStore } from '../store/index.js'
import { initHash } from '../sketch/index.js'
import { eventKey, type LoggedEvent } from '../schema/index.js'
import type { Goal, Site } from '../schema/index.js'
import { GoalIndex, PartitionTask, readingSettled, type PartitionState, type TaskContext } from '../stream/index.js'
import { todayOf } from '../goals/index.js'
import { goalsPartial, sessionsPartial } from './partials.js'
import { funnelByDays, overlapByDays, warmFunnel, warmPairs } from './day-joins.js'
import { breakdownPartial } from './breakdown.js'
import { reportPartial } from './report.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.now()
const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date(NOW - 30 * DAY).toISOString() }
const goal = (id: string, extra: Partial<Goal>): Goal =>
  ({ id, site_id: 'shop', name: id, goal_type: 'custom_event', created_at: site.created_at, ...extra })
const GOALS: Goal[] = [
  goal('g-product', { goal_type: 'pageview', match_path: '/product/*' }),
  goal('g-signup', { match_event: 'signup' }),
  goal('g-buy', { match_event: 'buy' }),
]
const today = todayOf('UTC', NOW)
const window = { from: today - 11, to: today }

t.before(initHash)

/** a small seeded generator: the same events on every run */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

function events(seed: number, sessions: number, fromMs: number, toMs: number, laterDays = 0.3): LoggedEvent[] {
  const rnd = random(seed)
  const out: LoggedEvent[] = []
  const referrers = ['https://search.example/', 'https://news.example/a', undefined]
  for (let s = 0; s < sessions; s++) {
    const id = `s${seed}-${s}`
    let ts = fromMs + Math.floor(rnd() * (toMs - fromMs))
    const referrer = referrers[Math.floor(rnd() * referrers.length)]
    const n = 1 + Math.floor(rnd() * 5)
    for (let i = 0; i < n; i++) {
      const r = rnd()
      const base = { site_id: 'shop', session_id: id, ts, received_at: ts, ...(i === 0 && referrer ? { referrer } : {}) }
      if (r < 0.5) out.push({ ...base, type: 'pageview', path: `/product/${Math.floor(rnd() * 4)}` })
      else if (r < 0.75) out.push({ ...base, type: 'custom_event', event_name: 'signup', path: '/join' })
      else out.push({ ...base, type: 'custom_event', event_name: 'buy', path: '/cart' })
      // a third of the sessions go on to a later day
      ts += rnd() < laterDays ? Math.floor(rnd() * 2 * DAY) : Math.floor(rnd() * 20 * 60_000)
      if (ts > NOW) break
    }
  }
  return out
}

function shuffle<T>(xs: T[], rnd: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j], xs[i]]
  }
  return xs
}

async function setUp(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-stored-days-'))
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  await log.createTopic({ name: 'events', partitions: 1 })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  await catalog.put('site', 'shop', site)
  const goals = new GoalIndex()
  for (const g of GOALS) {
    await catalog.put('goal', g.id, g)
    goals.add(g)
  }
  const store = await StateStore.open(join(dir, 'state'))
  const deadLetters: string[] = []
  const errors: string[] = []
  const ctx: TaskContext = {
    log, topic: 'events', store, catalog, goals, exactThreshold: 100_000, retentionDays: 90,
    maxHotSessions: () => Infinity, onError: (err, where) => errors.push(`${where}: ${String(err)}`),
    onDeadLetter: (_, offset, err) => deadLetters.push(`${offset}: ${String(err)}`),
  }
  let { task } = await PartitionTask.open(0, ctx)
  t.teardown(async () => {
    await task.close()
    await log.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const fold = async (values: LoggedEvent[]) => {
    const from = await log.endOffset('events', 0)
    await log.append('events', values.map((v) => ({ key: eventKey(v.site_id, v.session_id), value: Buffer.from(JSON.stringify(v)), timestamp: NOW })))
    await task.fold(await log.read('events', 0, from, values.length))
  }
  /** closes the task and opens it again: a restart, restoring from the store */
  const reopen = async () => {
    await task.close()
    ;({ task } = await PartitionTask.open(0, ctx))
  }
  return {
    get task() {
      return task
    },
    store, fold, reopen, deadLetters, errors,
  }
}

type Setup = Awaited<ReturnType<typeof setUp>>

/** Every question the analytics ask of a partition, over the window, as JSON. */
async function answers(s: Setup): Promise<Record<string, unknown>> {
  await s.task.snapshot()
  const state: PartitionState = s.task.state
  const lookup = (_: number, hks: string[]) => s.store.getSummaries(0, hks)
  const ask = <T>(fn: () => T | Promise<T>) => readingSettled([state], fn)
  const out: Record<string, unknown> = {}
  const ids = GOALS.map((g) => g.id)
  out.goals = await ask(() => goalsPartial([state], { kind: 'goals', site_id: 'shop', window, goal_ids: ids }))
  for (const id of ids) {
    // every page of the drill-down, newest first
    const rows: [number, string][] = []
    let cursor: number | null = null
    for (let page = 0; page < 100; page++) {
      const q = { kind: 'sessions' as const, goal_id: id, window, limit: 7, cursor_ts: cursor }
      const part = await ask(() => sessionsPartial([state], lookup, q))
      const sorted = part.rows.sort((a, b) => b.ts - a.ts || a.summary.session_id.localeCompare(b.summary.session_id))
      const fresh = sorted.filter((r) => cursor === null || r.ts < cursor || !rows.some(([ts, sid]) => ts === r.ts && sid === r.summary.session_id))
      for (const r of fresh.slice(0, 7)) rows.push([r.ts, r.summary.session_id])
      if (sorted.length <= 7) break
      cursor = rows[rows.length - 1][0]
    }
    out[`sessions ${id}`] = rows
    out[`report ${id}`] = await ask(() => reportPartial([state], { kind: 'report', site_id: 'shop', goal_id: id, window, interval: 'day', points: Array.from({ length: 12 }, (_, i) => window.from + i) }))
    out[`breakdown ${id}`] = await ask(() => breakdownPartial(state, { kind: 'breakdown', site_id: 'shop', goal_id: id, window, by: 'referrer' }, lookup))
    for (const other of ids) if (other > id) out[`overlap ${id} ${other}`] = await ask(() => overlapByDays(state, { kind: 'overlap', site_id: 'shop', a: id, b: other, window }))
  }
  out.funnel = await ask(() => funnelByDays(state, { kind: 'funnel', site_id: 'shop', steps: ids, window_ms: 3 * DAY, window }))
  out.week = await ask(() => funnelByDays(state, { kind: 'funnel', site_id: 'shop', steps: ['g-product', 'g-buy'], window_ms: 60 * 60_000, window: { from: today - 6, to: today } }))
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>
}

/** lets the task's settled days go now: two passes, so days read back since the last one go too */
function evict(s: Setup): number {
  let n = s.task.evictSettled() ?? 0
  s.task.state.settled.passed()
  n += s.task.evictSettled() ?? 0
  return n
}

t.test('settled days in the store answer every question as days kept in memory do, through late events and snapshots of every size', async (t) => {
  const kept = await setUp(t)
  const stored = await setUp(t)
  const rnd = random(7)
  const history = shuffle(events(1, 400, NOW - 10 * DAY, NOW), rnd)
  for (let i = 0; i < history.length; i += 37) {
    const batch = history.slice(i, i + 37)
    await kept.fold(batch)
    await stored.fold(batch)
    // snapshots between some batches only: a dirty day stays in memory until one has written it
    if (rnd() < 0.5) await stored.task.snapshot()
    evict(stored)
  }
  await stored.task.snapshot()
  const evicted = evict(stored)
  t.ok(stored.task.state.settled.evicted > 0 && evicted >= 0, `days left memory (${stored.task.state.settled.evicted})`)
  const g = stored.task.state.goals.get('g-product')!
  t.ok(g.storedCount > 0 && g.dayMap(today - 5) === undefined && g.daySize(today - 5) > 0, 'a settled day is held by its size alone')
  t.equal(g.size, kept.task.state.goals.get('g-product')!.size, 'with the same count of conversions')

  const before = await answers(kept)
  const loadedBefore = stored.task.state.settled.loaded
  t.same(await answers(stored), before, 'every answer as from the days in memory')
  t.ok(stored.task.state.settled.loaded > loadedBefore, 'the questions read settled days back')

  // late events: old-timestamped, of old sessions and new, and sessions that began days ago going on today
  evict(stored)
  const late = shuffle([
    ...events(2, 60, NOW - 9 * DAY, NOW - 3 * DAY),
    ...history.filter((_, i) => i % 17 === 0).map((e) => ({ ...e, ts: Math.min(NOW, e.ts + 3 * DAY), received_at: NOW, event_name: 'buy', type: 'custom_event' as const })),
  ], rnd)
  for (let i = 0; i < late.length; i += 11) {
    const batch = late.slice(i, i + 11)
    await kept.fold(batch)
    await stored.fold(batch)
    if (rnd() < 0.3) {
      await stored.task.snapshot()
      evict(stored)
    }
  }
  t.same(await answers(stored), await answers(kept), 'after late events into settled days, every answer still agrees')
  t.same(stored.deadLetters, [], 'no event was set aside')
  t.same(stored.errors, [])

  // the days read back by those questions leave again: the answers come from the store once more
  await stored.task.snapshot()
  evict(stored)
  t.same(await answers(stored), await answers(kept), 'and once more after they left again')
})

t.test('a day read back stays for one pass; days still to be written, and goals still being counted by value, stay', async (t) => {
  const s = await setUp(t)
  await s.fold(events(3, 50, NOW - 6 * DAY, NOW - 3 * DAY))
  t.equal(s.task.evictSettled(), 0, 'nothing written yet: nothing leaves')
  await s.task.snapshot()
  t.ok((s.task.evictSettled() ?? 0) > 0, 'written: the settled days leave')
  const g = s.task.state.goals.get('g-buy')!
  const day = g.storedDays()[0]
  t.throws(() => g.earliestOn(0, 0, day), { name: 'DaysNotLoaded', message: /in the store only/ }, 'a read of its sessions throws until it is back')
  await s.task.state.settled.load('g-buy', [day])
  t.notOk(g.isStored(day), 'read back')
  t.equal(s.task.evictSettled(), 0, 'the pass after the read leaves it')
  s.task.state.settled.passed()
  t.equal(s.task.evictSettled(), 1, 'the one after lets it go')

  s.task.state.settled.pins++
  t.equal(s.task.evictSettled(), undefined, 'not while a question reads days')
  s.task.state.settled.pins--
  s.task.state.retally(['g-buy'])
  await s.task.state.settled.load('g-buy', [day])
  s.task.state.settled.passed()
  t.equal(s.task.evictSettled(), 0, 'a goal whose counts by value wait keeps its days')
  await s.task.tallyValues()
  t.equal(s.task.evictSettled(), 1, 'counted: they go')
})

t.test('the pass lets settled days go a slice of the event loop at a time', async (t) => {
  const s = await setUp(t)
  await s.fold(events(7, 80, NOW - 8 * DAY, NOW - 2 * DAY))
  await s.task.snapshot()
  const stored = () => GOALS.reduce((n, g) => n + (s.task.state.goals.get(g.id)?.storedCount ?? 0), 0)
  t.equal(s.task.evictSettled(Date.now(), 0), 1, 'past its time: one day, then it stops')
  t.equal(stored(), 1)
  await s.task.packSettled()
  const all = GOALS.reduce((n, g) => n + (s.task.state.goals.get(g.id)?.days().filter((d) => d < today - 1).length ?? 0), 0)
  t.ok(all > 5)
  t.equal(stored(), all, 'the pass went on in slices until every settled day had left')
})

t.test('late events folded between the pass\'s slices: every answer as from memory', async (t) => {
  const history = events(8, 120, NOW - 8 * DAY, NOW - 2 * DAY)
  const kept = await setUp(t)
  const stored = await setUp(t)
  await kept.fold(history)
  await stored.fold(history)
  await stored.task.snapshot()
  t.equal(stored.task.evictSettled(Date.now(), 0), 1, 'a first slice: one day')
  // late events of old sessions and new ones into settled days, between the slices
  const late = shuffle(events(9, 60, NOW - 7 * DAY, NOW - 3 * DAY), random(9))
  for (const s of [kept, stored]) await s.fold(late.slice(0, 30))
  t.equal(stored.task.evictSettled(Date.now(), 0), 1, 'another slice')
  for (const s of [kept, stored]) await s.fold(late.slice(30))
  await stored.task.snapshot()
  await stored.task.packSettled()
  t.ok(stored.task.state.settled.evicted > 2)
  t.same(await answers(stored), await answers(kept))
  t.same(stored.deadLetters, [])
})

/** A task that keeps every day and one whose settled days left memory, after the same events and a snapshot. */
async function bothFolded(t: Test, history: LoggedEvent[]) {
  const kept = await setUp(t)
  const stored = await setUp(t)
  await kept.fold(history)
  await stored.fold(history)
  await stored.task.snapshot()
  evict(stored)
  const state = stored.task.state
  const ids = GOALS.map((g) => g.id)
  /** goal days held in the store only */
  const inStore = () => ids.reduce((n, id) => n + (state.goals.get(id)?.storedCount ?? 0), 0)
  return { kept, stored, state, ids, inStore }
}

t.test('warming the pairs\' day joins reads each settled day back for its walk alone; questions then read nothing back', async (t) => {
  const { kept, stored, state, ids, inStore } = await bothFolded(t, events(4, 300, NOW - 9 * DAY, NOW))
  const before = inStore()
  t.ok(before > 0)
  t.equal(await warmPairs(state, ids), 3, 'three pairs warmed')
  t.ok(state.settled.loaded >= before, 'every settled day was read back')
  t.equal(inStore(), before, 'and let go again after its walk')
  const loaded = state.settled.loaded
  for (const [a, b] of [['g-buy', 'g-product'], ['g-product', 'g-signup']]) {
    const q = { kind: 'overlap' as const, site_id: 'shop', a, b, window }
    t.same(await readingSettled([state], () => overlapByDays(state, q)), await overlapByDays(kept.task.state, q), `${a} × ${b} as from memory`)
  }
  t.equal(state.settled.loaded, loaded, 'the questions read no settled day back')

  // a day changed while its walk ran stays until a snapshot has written it
  const day = state.goals.get('g-buy')!.storedDays()[0]
  await state.withSettledDay(['g-buy'], day, async () => {
    await stored.fold([{ type: 'custom_event', event_name: 'buy', site_id: 'shop', session_id: 'late-buyer', ts: day * DAY + 12 * HOUR, received_at: NOW }])
  })
  t.notOk(state.goals.get('g-buy')!.isStored(day), 'changed: it stays')
  await stored.task.snapshot()
  evict(stored)
  t.ok(state.goals.get('g-buy')!.isStored(day), 'written: the pass lets it go')
})

t.test('warming a funnel reads each settled day of its entry step back for its walk alone; the question answers as from memory', async (t) => {
  // sessions of one day each: the question's correction for sessions on several days reads nothing
  const all = events(5, 300, NOW - 9 * DAY, NOW, 0)
  const days = new Map<string, Set<number>>()
  for (const e of all) days.set(e.session_id, (days.get(e.session_id) ?? new Set()).add(Math.floor(e.ts / DAY)))
  const { kept, state, inStore } = await bothFolded(t, all.filter((e) => days.get(e.session_id)!.size === 1))
  const before = inStore()
  const q = { kind: 'funnel' as const, site_id: 'shop', steps: ['g-product', 'g-signup', 'g-buy'], window_ms: 2 * HOUR, window }
  await warmFunnel(state, q)
  t.ok(state.settled.loaded > 0, 'settled days were read back')
  t.equal(inStore(), before, 'and let go again after each walk')
  const loaded = state.settled.loaded
  t.same(await readingSettled([state], () => funnelByDays(state, q)), await funnelByDays(kept.task.state, q), 'the funnel as from memory')
  t.equal(state.settled.loaded, loaded, 'the question read no settled day back: its days were joined by the warming')
})

t.test('goals that converted neither today nor yesterday: their newest days are settled, and warming joins them too', async (t) => {
  // whatever the hour: every event before yesterday began, every session on one day
  const end = (today - 1) * DAY - 2 * HOUR
  const all = events(10, 200, NOW - 9 * DAY, end, 0).filter((e) => e.ts < end)
  const days = new Map<string, Set<number>>()
  for (const e of all) days.set(e.session_id, (days.get(e.session_id) ?? new Set()).add(Math.floor(e.ts / DAY)))
  const { kept, state, ids, inStore } = await bothFolded(t, all.filter((e) => days.get(e.session_id)!.size === 1))
  t.ok(ids.every((id) => Math.max(...state.goals.get(id)!.days()) < today - 1), 'no goal holds today or yesterday')
  t.ok(ids.every((id) => state.goals.get(id)!.storedCount > 0), 'and every goal\'s newest days are in the store')
  const q = { kind: 'funnel' as const, site_id: 'shop', steps: ['g-product', 'g-signup', 'g-buy'], window_ms: 2 * HOUR, window }
  await warmFunnel(state, q)
  t.equal(await warmPairs(state, ids), 3)
  const loaded = state.settled.loaded
  const before = inStore()
  t.same(await readingSettled([state], () => funnelByDays(state, q)), await funnelByDays(kept.task.state, q), 'the funnel as from memory')
  for (const [a, b] of [['g-buy', 'g-product'], ['g-product', 'g-signup']]) {
    const o = { kind: 'overlap' as const, site_id: 'shop', a, b, window }
    t.same(await readingSettled([state], () => overlapByDays(state, o)), await overlapByDays(kept.task.state, o), `${a} × ${b} as from memory`)
  }
  t.equal(state.settled.loaded, loaded, 'the questions read no settled day back: the warming joined the newest days too')
  t.equal(inStore(), before)
})

t.test('a settled day keeps what a funnel reads of its sessions on several days: once the days were read back and let go, funnels read nothing', async (t) => {
  // half the sessions go on to a later day: the funnel's correction walks many of them
  const { kept, stored, state, ids, inStore } = await bothFolded(t, events(6, 300, NOW - 9 * DAY, NOW, 0.5))
  t.ok(ids.every((id) => state.goals.get(id)!.multiDayCount > 0), 'every goal has sessions on several days')
  const funnels = [
    { kind: 'funnel' as const, site_id: 'shop', steps: ['g-product', 'g-signup', 'g-buy'], window_ms: 2 * HOUR, window },
    { kind: 'funnel' as const, site_id: 'shop', steps: ['g-signup', 'g-buy'], window_ms: 2 * DAY, window },
    { kind: 'funnel' as const, site_id: 'shop', steps: ['g-buy', 'g-product'], window_ms: 3 * DAY, window },
  ]
  const expected = await Promise.all(funnels.map((q) => funnelByDays(kept.task.state, q)))
  const ask = async (s: PartitionState) => {
    const loaded = s.settled.loaded
    const answers = []
    for (const q of funnels) answers.push(await readingSettled([s], () => funnelByDays(s, q)))
    return { answers, read: s.settled.loaded - loaded }
  }
  const before = inStore()
  // the warming joins each day's sessions (reading each settled day back for its walk and letting it go)
  for (const q of funnels) await warmFunnel(state, q)
  t.equal(inStore(), before, 'every settled day left memory again')
  t.same(await ask(state), { answers: expected, read: 0 }, 'the funnels as from memory; their sessions on several days read no day back')

  // a restore lets each day go before it has read the side index, keeping nothing of it: what reads
  // the days back after the restart (the recount by value here, the warming) lets them go keeping it
  await stored.reopen()
  const restored = stored.task.state
  const stillStored = () => ids.reduce((n, id) => n + (restored.goals.get(id)?.storedCount ?? 0), 0)
  t.ok(stillStored() > 0, 'the restore let the settled days go')
  await stored.task.tallyValues()
  evict(stored)
  t.equal(stillStored(), before, 'as many days in the store as before the restart')
  for (const q of funnels) await warmFunnel(restored, q)
  t.same(await ask(restored), { answers: expected, read: 0 }, 'after the restart: the same answers, and no day read back')
})
