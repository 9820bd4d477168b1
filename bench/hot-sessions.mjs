#!/usr/bin/env node
/**
 * The hot session state of one partition, measured in this process against dist/:
 *
 *   node --expose-gc bench/hot-sessions.mjs [--sessions 500000] [--mix-sessions 100000] [--dist dist]
 *
 * - fresh: `sessions` events, each of a new session, folded the way a partition task folds them
 *   (hash, key, PartitionState.fold): µs per event, every GC pause seen meanwhile (the events'
 *   own garbage included), then one full GC with them all hot;
 * - memory: bytes held per hot session after a full GC, once a snapshot has cleaned them;
 * - snapshot: every dirty summary encoded into a real LevelDB chained batch and committed: µs per
 *   summary, the longest event-loop stall while it runs, the commit;
 * - mix: `mix-sessions` sessions of 6 events each, 10,000 under way at a time, into a fresh state.
 *
 * Events are built, untimed, in chunks of 10,000 with the shape JSON.parse gives them (fresh
 * strings and objects), then folded, timed. Times are CPU time of the process (all its threads, GC
 * helpers included), which a shared machine disturbs less than wall time; GC pauses are wall time.
 * `--dist` points at another build (e.g. a copy of an older one) to compare in one sitting.
 * Prints one JSON document.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { fmix32 } from './lib/synthetic-state.mjs'

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '500000' },
    'mix-sessions': { type: 'string', default: '100000' },
    dist: { type: 'string', default: new URL('../dist', import.meta.url).pathname },
  },
})
const from = (path) => import(pathToFileURL(join(values.dist, path)).href)
const { PartitionState, hashKey } = await from('stream/partition-state.js')
const { GoalIndex } = await from('stream/goal-index.js')
const { StateStore } = await from('store/index.js')
const { hash64, initHash } = await from('sketch/index.js')
const { eventKey } = await from('schema/event.js')
const SESSIONS = Number(values.sessions)
const MIX_SESSIONS = Number(values['mix-sessions'])
const EVENTS_PER_SESSION = 6
const OPEN_SESSIONS = 10_000
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')
await initHash()

const SITE = { site_id: 'shop', domain: null, timezone: 'Europe/Paris', created_at: '' }
const UAS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
]
const REFERRERS = ['https://www.google.com/', 'https://news.ycombinator.com/', 'https://duckduckgo.com/']
const goals = new GoalIndex()
goals.add({ id: 'g-buy', site_id: 'shop', name: 'buy', goal_type: 'pageview', match_path: '/checkout/**', created_at: '' })
goals.add({ id: 'g-signup', site_id: 'shop', name: 'signup', goal_type: 'custom_event', event_name: 'signup', created_at: '' })

/** event `k` of session `i`, as JSON.parse would hand it over (fresh strings, fresh objects) */
function event(i, k, now) {
  const h = fmix32(i ^ 0x3c6ef372)
  const e = {
    type: k === 3 ? 'custom_event' : 'pageview',
    site_id: 'shop'.slice(0),
    session_id: `s${h.toString(36)}${i.toString(36)}`,
    visitor_id: `v${fmix32(h).toString(36)}${i.toString(36)}`,
    ts: now - 60_000 + k * 7_000 + (i % 50_000),
    received_at: now,
  }
  if (e.type === 'pageview') e.path = k === 5 ? `/checkout/${i % 40}` : `/products/${(h + k) % 700}`
  else e.event_name = 'signup'
  if (k === 0) {
    e.user_agent = UAS[h % UAS.length].slice(0)
    e.screen = { width: 1920 }
    if (h % 3) e.referrer = REFERRERS[h % REFERRERS.length].slice(0)
  }
  return JSON.parse(JSON.stringify(e))
}

function fold(state, e) {
  const h = hash64(eventKey(e.site_id, e.session_id))
  // (builds before the session table took a hash key too)
  if (state.fold.length === 6) state.fold(e, h.hi, h.lo, hashKey(h.hi, h.lo), SITE, goals)
  else state.fold(e, h.hi, h.lo, SITE, goals)
}

function held() {
  globalThis.gc()
  globalThis.gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** Runs `work` and reports its duration and the GC pauses (perf_hooks 'gc' entries) meanwhile. */
async function withGc(work) {
  const pauses = []
  const obs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ ms: entry.duration, kind: entry.detail?.kind ?? entry.kind })
  })
  obs.observe({ entryTypes: ['gc'] })
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  // the observer delivers asynchronously
  await new Promise((resolve) => setTimeout(resolve, 50))
  obs.disconnect()
  const major = pauses.filter((p) => p.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
  const sum = (list) => list.reduce((n, p) => n + p.ms, 0)
  return {
    ms,
    gc: {
      pauses: pauses.length,
      totalMs: round(sum(pauses)),
      maxMs: round(Math.max(0, ...pauses.map((p) => p.ms))),
      major: major.length,
      majorMaxMs: round(Math.max(0, ...major.map((p) => p.ms))),
      shareOfTime: round(sum(pauses) / ms),
    },
  }
}

const round = (x) => Math.round(x * 1000) / 1000
const CHUNK = 10_000

/** CPU and wall µs spent folding, accumulated over chunks */
class Clock {
  cpu = 0
  wall = 0
  run(fn) {
    const c = process.cpuUsage()
    const w = performance.now()
    fn()
    const d = process.cpuUsage(c)
    this.cpu += d.user + d.system
    this.wall += (performance.now() - w) * 1000
  }
  per(n) {
    return { cpuUsPerEvent: round(this.cpu / n), wallUsPerEvent: round(this.wall / n) }
  }
}

async function fresh(state) {
  const now = Date.now()
  const clock = new Clock()
  const byHundredK = []
  let mark = 0
  const r = await withGc(async () => {
    for (let at = 0; at < SESSIONS; at += CHUNK) {
      const events = []
      for (let i = at; i < Math.min(SESSIONS, at + CHUNK); i++) events.push(event(i, 0, now))
      clock.run(() => {
        for (const e of events) fold(state, e)
      })
      if ((at + CHUNK) % 100_000 === 0) byHundredK.push(round((clock.cpu - mark) / 100_000)), (mark = clock.cpu)
      // a turn of the loop between chunks, as between log reads
      await new Promise((resolve) => setImmediate(resolve))
    }
  })
  return { events: SESSIONS, ...clock.per(SESSIONS), cpuUsPerEventBy100k: byHundredK, gc: r.gc }
}

async function snapshot(state, dir) {
  const store = await StateStore.open(dir)
  const dirty = state.takeDirty()
  const summaries = dirty.summaries.size ?? dirty.summaries.length
  const delay = monitorEventLoopDelay({ resolution: 5 })
  const batch = store.openBatch()
  delay.enable()
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  if ('writing' in state) state.writing = dirty.summaries
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  const encodeMs = performance.now() - t0
  const c = process.cpuUsage(c0)
  delay.disable()
  const t1 = performance.now()
  await batch.commit()
  const commitMs = performance.now() - t1
  if ('writing' in state) state.writing = null
  state.written?.(dirty)
  await store.close()
  return {
    summaries, encodeMs: round(encodeMs), cpuUsPerSummary: round((c.user + c.system) / summaries),
    maxLoopDelayMs: round(delay.max / 1e6), commitMs: round(commitMs),
  }
}

async function mix() {
  const state = new PartitionState(1, 8192)
  const now = Date.now()
  const total = MIX_SESSIONS * EVENTS_PER_SESSION
  const clock = new Clock()
  const r = await withGc(async () => {
    // sessions OPEN_SESSIONS at a time, their events interleaved
    for (let base = 0; base < MIX_SESSIONS; base += OPEN_SESSIONS) {
      const end = Math.min(MIX_SESSIONS, base + OPEN_SESSIONS)
      for (let k = 0; k < EVENTS_PER_SESSION; k++) {
        const events = []
        for (let i = base; i < end; i++) events.push(event(i, k, now))
        clock.run(() => {
          for (const e of events) fold(state, e)
        })
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
  })
  return { sessions: MIX_SESSIONS, events: total, ...clock.per(total), gc: r.gc, hot: state.summaries.size }
}

const dir = mkdtempSync(join(tmpdir(), 'goalpost-hot-'))
try {
  const before = held()
  const state = new PartitionState(0, 8192)
  const freshResult = await fresh(state)
  // a full, atomic mark-compact with every session hot: what the old generation's size costs
  const gcStarted = performance.now()
  globalThis.gc()
  freshResult.fullGcMs = round(performance.now() - gcStarted)
  const snap = await snapshot(state, dir)
  const after = held()
  const memory = { hotSessions: state.summaries.size, bytesPerSession: round((after - before) / state.summaries.size) }
  const mixResult = await mix()
  console.log(JSON.stringify({ node: process.version, fresh: freshResult, memory, snapshot: snap, mix: mixResult }, null, 2))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
