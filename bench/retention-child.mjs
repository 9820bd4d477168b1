/**
 * Child process of the retention bench, run with --expose-gc, one per count of retained days: a
 * real PartitionTask (EmbeddedLog + Catalog + StateStore + GoalIndex, as src/query/stored-days.test.ts
 * sets it up) folds `days` days of `sessionsPerDay` sessions each through the log, snapshots, and
 * then lets its settled days' sets leave memory for the store (PartitionTask.evictSettled). It
 * reports the memory held before and after (heapUsed + arrayBuffers after two full GCs, RSS, and
 * the bytes of goal state by part), then what a question on settled days costs when its sets are
 * read back from the store (cold) and when they are in memory (warm).
 *
 * argv[2]: JSON { days, sessionsPerDay, batch, snapshotEvery, maxHotSessions, hotSessionMs, exactThreshold }.
 * Messages out: progress, result, error.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { EmbeddedLog, EmbeddedConfigLog } from '../dist/log/index.js'
import { Catalog } from '../dist/catalog/index.js'
import { StateStore } from '../dist/store/index.js'
import { initHash } from '../dist/sketch/index.js'
import { eventKey } from '../dist/schema/index.js'
import { GoalIndex, MEMORY_KINDS, PartitionTask, readingSettled } from '../dist/stream/index.js'
import { DAY_MS, todayOf } from '../dist/goals/index.js'
import { sessionsPartial } from '../dist/query/partials.js'
import { overlapByDays } from '../dist/query/day-joins.js'
import { fmix32 } from './lib/synthetic-state.mjs'

const o = JSON.parse(process.argv[2])
/** `then` runs once the message is out (or at once without a channel) */
const send = (m, then) => (process.send ? process.send(m, then) : then?.())
const progress = (text) => send({ type: 'progress', text })
const UINT32 = 2 ** 32
const MINUTE = 60_000

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')

const NOW = Date.now()
const site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date(NOW - 400 * DAY_MS).toISOString() }
const goal = (id, extra) => ({ id, site_id: 'shop', name: id, goal_type: 'custom_event', created_at: site.created_at, ...extra })
const GOALS = [
  goal('g-product', { goal_type: 'pageview', match_path: '/product/*' }),
  goal('g-signup', { match_event: 'signup' }),
  goal('g-buy', { match_event: 'buy' }),
]
const today = todayOf('UTC', NOW)

/** VmRSS split into anonymous memory and file pages (LevelDB maps its table files), from /proc */
function rssParts() {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
  return { rssAnon: kb('RssAnon'), rssFile: kb('RssFile') }
}

function held() {
  // two passes: the first may only schedule the freeing of weakly held and external memory
  globalThis.gc()
  globalThis.gc()
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, heapTotal: m.heapTotal, arrayBuffers: m.arrayBuffers, external: m.external, total: m.heapUsed + m.arrayBuffers, rss: m.rss, ...rssParts() }
}

/**
 * The bytes of goal state by part: day sets in memory, hour sets (recent days), completion times
 * (sessions completing a goal more than once a day keep every time; they stay when a day leaves),
 * counts by value; the rest of task.memory('goals') is the multi-day index and per-day overheads.
 */
function goalParts(state) {
  let daySets = 0
  let hourSets = 0
  let times = 0
  let timesSessions = 0
  let tallies = 0
  let conversions = 0
  let inMemory = 0
  let stored = 0
  for (const g of state.goals.values()) {
    conversions += g.size
    stored += g.storedCount
    for (const day of g.days()) {
      const map = g.dayMap(day)
      if (map !== undefined) {
        daySets += 48 + map.memoryBytes()
        inMemory++
      }
      const t = g.timesOf(day)
      if (t !== undefined) {
        times += 48 + t.memoryBytes()
        timesSessions += t.size
      }
    }
    for (const map of g.hourMaps().values()) hourSets += 48 + map.memoryBytes()
  }
  for (const t of state.tallies.values()) tallies += t.memoryBytes()
  return { conversions, daySetsInMemory: inMemory, daySetsStored: stored, daySets, hourSets, times, timesSessions, tallies }
}

function measure(task) {
  const memory = held()
  const kinds = Object.fromEntries(MEMORY_KINDS.map((k) => [k, task.memory(k)]))
  return { ...memory, kinds, goals: goalParts(task.state) }
}

/** a seeded generator: the same sessions on every run */
function random(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x)
    return ((x ^ (x >>> 14)) >>> 0) / UINT32
  }
}

const REFERRERS = ['https://www.google.com/', 'https://news.example/a', 'https://t.co/x', undefined, undefined]

/**
 * The events of a day's sessions, session by session: 2–3 events each within the day (for today,
 * before now), a pageview first (/product/N for 70 %), then signups, buys or product pages.
 */
function* dayEvents(day) {
  const start = day * DAY_MS
  // a session starts at least 15 minutes before the day's end (or now) and lasts up to 10
  const span = Math.max(1, Math.min(DAY_MS, NOW - start) - 15 * MINUTE)
  const rnd = random(fmix32(day ^ 0x5bd1e995))
  for (let s = 0; s < o.sessionsPerDay; s++) {
    const session_id = `d${day}-s${s}`
    let ts = start + Math.floor(rnd() * span)
    const n = rnd() < 0.5 ? 3 : 2
    const referrer = REFERRERS[Math.floor(rnd() * REFERRERS.length)]
    for (let i = 0; i < n; i++) {
      const base = { site_id: 'shop', session_id, ts, received_at: ts }
      if (i === 0) {
        const path = rnd() < 0.7 ? `/product/${Math.floor(rnd() * 500)}` : '/'
        yield { ...base, type: 'pageview', path, ...(referrer ? { referrer } : {}) }
      } else {
        const r = rnd()
        if (r < 0.3) yield { ...base, type: 'custom_event', event_name: 'signup', path: '/join' }
        else if (r < 0.55) yield { ...base, type: 'custom_event', event_name: 'buy', path: '/cart' }
        else yield { ...base, type: 'pageview', path: `/product/${Math.floor(rnd() * 500)}` }
      }
      ts += Math.floor(rnd() * 5 * MINUTE)
    }
  }
}

async function setUp(dir) {
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
  const errors = []
  const ctx = {
    log, topic: 'events', store, catalog, goals, exactThreshold: o.exactThreshold, retentionDays: 90,
    maxHotSessions: () => o.maxHotSessions, hotSessionMs: o.hotSessionMs,
    onError: (err, where) => errors.push(`${where}: ${err?.stack ?? String(err)}`),
    onDeadLetter: (_, offset, err) => errors.push(`dead letter at ${offset}: ${String(err)}`),
  }
  const { task } = await PartitionTask.open(0, ctx)
  return { log, store, task, errors }
}

/** Folds every day's events through the log, in batches, with snapshots on the way and at the end. */
async function build({ log, task }) {
  const started = performance.now()
  let events = 0
  let batches = 0
  let appendMs = 0
  let foldMs = 0
  let snapshotMs = 0
  const every = Math.max(1, Math.round(o.days / 6))
  let values = []
  const flush = async () => {
    if (values.length === 0) return
    const t0 = performance.now()
    const from = await log.endOffset('events', 0)
    await log.append('events', values.map((v) => ({ key: eventKey(v.site_id, v.session_id), value: Buffer.from(JSON.stringify(v)), timestamp: NOW })))
    const records = await log.read('events', 0, from, values.length)
    if (records.length !== values.length) throw new Error(`read ${records.length} records back of ${values.length}`)
    const t1 = performance.now()
    await task.fold(records)
    const t2 = performance.now()
    appendMs += t1 - t0
    foldMs += t2 - t1
    events += values.length
    values = []
    if (++batches % o.snapshotEvery === 0) {
      await task.snapshot()
      snapshotMs += performance.now() - t2
    }
  }
  for (let d = 0; d < o.days; d++) {
    const day = today - o.days + 1 + d
    for (const e of dayEvents(day)) {
      values.push(e)
      if (values.length >= o.batch) await flush()
    }
    await flush()
    if ((d + 1) % every === 0 || d === o.days - 1) {
      const s = (performance.now() - started) / 1000
      progress(`D=${o.days}: ${d + 1}/${o.days} days, ${events.toLocaleString('en-US')} events, ${Math.round(events / s).toLocaleString('en-US')} events/s (append+read ${(appendMs / 1000).toFixed(0)} s, fold ${(foldMs / 1000).toFixed(0)} s, snapshots ${(snapshotMs / 1000).toFixed(0)} s)`)
    }
  }
  // a snapshot the fold started may be under way: it does not hold the latest changes, the next does
  const t = performance.now()
  await task.snapshot()
  await task.snapshot()
  snapshotMs += performance.now() - t
  const wallMs = performance.now() - started
  return { events, batches, wallMs, eventsPerSec: events / (wallMs / 1000), appendMs, foldMs, snapshotMs }
}

/** Lets every settled day go: two passes, so days read back since the last one go too. */
async function evict(task) {
  let n = 0
  for (let pass = 0; pass < 2; pass++) {
    let got
    // undefined while anything pins the partition (a fold, a snapshot, a question reading days)
    for (let tries = 0; tries < 200 && (got = task.evictSettled(NOW)) === undefined; tries++) await new Promise((resolve) => setTimeout(resolve, 50))
    if (got === undefined) throw new Error('evictSettled stayed busy for 10 s')
    n += got
    if (pass === 0) task.state.settled.passed()
  }
  return n
}

/** one question, timed, with the sets it read back from the store */
async function timed(state, fn) {
  const loaded = state.settled.loaded
  const t0 = performance.now()
  const answer = await readingSettled([state], fn)
  return { ms: performance.now() - t0, loaded: state.settled.loaded - loaded, answer }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** warm asks: the median of `n` */
async function warm(state, fn, n = 5) {
  const runs = []
  for (let i = 0; i < n; i++) runs.push(await timed(state, fn))
  return { ms: median(runs.map((r) => r.ms)), runsMs: runs.map((r) => r.ms), loaded: runs.reduce((a, r) => a + r.loaded, 0), answer: runs[0].answer }
}

const sessionsAnswer = (p) => ({ conversions: p.conversions, rows: p.rows.length, first: p.rows.map((r) => `${r.ts} ${r.summary.session_id}`).sort().join(',') })

async function questions({ task, store }) {
  const { state } = task
  const window = { from: today - o.days + 1, to: today - 2 }
  const lookup = (_, hks) => store.getSummaries(0, hks)
  const sessionsQ = (w) => ({ kind: 'sessions', goal_id: 'g-buy', window: w, limit: 20, cursor_ts: null })
  const overlapQ = (w) => ({ kind: 'overlap', site_id: 'shop', a: 'g-signup', b: 'g-buy', window: w })
  const sessions = (w) => () => sessionsPartial([state], lookup, sessionsQ(w))
  const overlap = (w) => () => overlapByDays(state, overlapQ(w))

  // the code paths compiled first, on days in memory (today and yesterday): the cold runs time the store, not the compiler
  const recent = { from: today - 1, to: today }
  for (let i = 0; i < 3; i++) {
    await timed(state, sessions(recent))
    await timed(state, overlap(recent))
  }

  const out = { window, windowDays: window.to - window.from + 1 }
  const coldS = await timed(state, sessions(window))
  const warmS = await warm(state, sessions(window))
  out.sessions = { cold: { ms: coldS.ms, loaded: coldS.loaded }, warm: { ms: warmS.ms, runsMs: warmS.runsMs, loaded: warmS.loaded } }
  out.sessions.answer = sessionsAnswer(coldS.answer)
  out.sessions.sameAnswer = JSON.stringify(sessionsAnswer(coldS.answer)) === JSON.stringify(sessionsAnswer(warmS.answer))

  out.evictedBeforeOverlap = await evict(task)
  const coldO = await timed(state, overlap(window))
  const warmO = await warm(state, overlap(window))
  // once more from the store: the per-day joins are kept under the days' stamps, which eviction keeps
  out.evictedBeforeCachedOverlap = await evict(task)
  const cachedO = await timed(state, overlap(window))
  // the store's part alone: the same sets read back with no question
  out.evictedBeforeReadBack = await evict(task)
  const loaded = state.settled.loaded
  const t0 = performance.now()
  await state.settled.loadRange(['g-signup', 'g-buy'], window.from, window.to)
  out.readBack = { ms: performance.now() - t0, loaded: state.settled.loaded - loaded }
  out.overlap = {
    cold: { ms: coldO.ms, loaded: coldO.loaded },
    warm: { ms: warmO.ms, runsMs: warmO.runsMs, loaded: warmO.loaded },
    storedJoinsCached: { ms: cachedO.ms, loaded: cachedO.loaded },
    answer: coldO.answer,
    sameAnswer: JSON.stringify(coldO.answer) === JSON.stringify(warmO.answer) && JSON.stringify(coldO.answer) === JSON.stringify(cachedO.answer),
  }
  return out
}

async function main() {
  await initHash()
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-retention-'))
  let s
  try {
    const empty = held()
    s = await setUp(dir)
    progress(`D=${o.days}: ${o.sessionsPerDay.toLocaleString('en-US')} sessions a day for ${o.days} days to ${new Date(today * DAY_MS).toISOString().slice(0, 10)}, in ${dir}`)
    const built = await build(s)
    const { task } = s
    // hot summaries: capped while folding, then every one (all written) leaves, so the session table does not weigh in
    const summariesBeforeEviction = task.state.summaries.size
    const summariesEvicted = task.state.evictSummaries(Infinity)
    const summariesLeft = task.state.summaries.size
    const before = measure(task)
    const t0 = performance.now()
    const evicted = await evict(task)
    const evictMs = performance.now() - t0
    const after = measure(task)
    progress(`D=${o.days}: ${evicted} day sets left memory in ${evictMs.toFixed(0)} ms; goals ${(before.kinds.goals / 2 ** 20).toFixed(1)} → ${(after.kinds.goals / 2 ** 20).toFixed(1)} MiB, heap+arrayBuffers ${(before.total / 2 ** 20).toFixed(0)} → ${(after.total / 2 ** 20).toFixed(0)} MiB, RSS ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB`)
    if (after.goals.conversions !== before.goals.conversions) throw new Error(`conversions changed by eviction: ${before.goals.conversions} → ${after.goals.conversions}`)
    const q = await questions(s)
    progress(`D=${o.days}: sessions (buy, ${q.windowDays} settled days) cold ${q.sessions.cold.ms.toFixed(1)} ms (${q.sessions.cold.loaded} sets read back), warm ${q.sessions.warm.ms.toFixed(2)} ms; overlap (signup × buy) cold ${q.overlap.cold.ms.toFixed(1)} ms (${q.overlap.cold.loaded} read back), warm ${q.overlap.warm.ms.toFixed(2)} ms`)
    const afterQuestions = measure(task)
    if (s.errors.length) throw new Error(`the task reported errors:\n${s.errors.slice(0, 5).join('\n')}`)
    return {
      type: 'result', days: o.days, sessionsPerDay: o.sessionsPerDay, sessions: o.days * o.sessionsPerDay,
      build: built, summariesBeforeEviction, summariesEvicted, summariesLeft, empty, before, evicted, evictMs, after,
      settled: { loaded: task.state.settled.loaded, evicted: task.state.settled.evicted },
      questions: q, afterQuestions,
    }
  } finally {
    // before the result goes out: the parent stops this process once it has it
    if (s) {
      await s.task.close()
      await s.log.close()
      await s.store.close()
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

main().then((result) => {
  send(result, () => process.exit(0))
}, (err) => {
  send({ type: 'error', error: err?.stack ?? String(err) }, () => process.exit(1))
})
