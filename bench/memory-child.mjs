/**
 * Child process of the memory bench, run with --expose-gc: grows state with the real classes from
 * dist/ and reports what it costs as (heapUsed + arrayBuffers) after a full GC, before and after.
 * U64Map tables are typed arrays, whose bytes V8 counts in arrayBuffers rather than heapUsed: the
 * sum is what the process holds for the state.
 *
 * argv[2]: JSON { sizes, partitions, goals, days, multiDayShare, exactThreshold }.
 * Messages out: progress, result, error.
 */
import { PartitionState } from '../dist/stream/partition-state.js'
import { SEEN_PAGE, SessionTable } from '../dist/stream/session-table.js'
import { SessionCounter } from '../dist/sketch/index.js'
import { DAY_MS } from '../dist/goals/index.js'
import { fmix32 } from './lib/synthetic-state.mjs'

const o = JSON.parse(process.argv[2])
const send = (m) => process.send?.(m)
const progress = (text) => send({ type: 'progress', text })
const UINT32 = 2 ** 32

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc')

function held() {
  // two passes: the first may only schedule the freeing of weakly held and external memory
  globalThis.gc()
  globalThis.gc()
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, total: m.heapUsed + m.arrayBuffers, rss: m.rss }
}

const delta = (a, b) => ({ heapUsed: b.heapUsed - a.heapUsed, arrayBuffers: b.arrayBuffers - a.arrayBuffers, total: b.total - a.total, rss: b.rss - a.rss })

/**
 * `n` converted sessions — (goal, session) pairs — over goals × days × partitions, a share
 * `multiDayShare` of them completing the goal again the next day (two entries, one session).
 */
function goalDays(n) {
  const today = Math.floor(Date.now() / DAY_MS)
  const firstDay = today - o.days + 1
  const parts = Array.from({ length: o.partitions }, (_, p) => new PartitionState(p, o.exactThreshold))
  const ids = Array.from({ length: o.goals }, (_, g) => `goal-${g}`)
  const multiLimit = Math.floor(o.multiDayShare * UINT32)
  const oneDay = [0, 0]
  const twoDays = [0, 0]
  let entries = 0
  for (let i = 0; i < n; i++) {
    const lo = fmix32(i ^ 0x2545f491)
    const hi = fmix32(lo ^ 0x9e3779b9)
    const state = parts[fmix32(hi ^ 0x68e31da4) % o.partitions]
    const d = fmix32(lo ^ 0x7feb352d) % o.days
    const day = firstDay + d
    const again = d < o.days - 1 && fmix32(lo ^ 0x1b873593) < multiLimit
    const span = again ? ((twoDays[0] = day), (twoDays[1] = day + 1), twoDays) : ((oneDay[0] = oneDay[1] = day), oneDay)
    const goal = ids[i % ids.length]
    state.recordConversion(goal, hi, lo, day, day * DAY_MS + (i % DAY_MS), span)
    entries++
    if (again) {
      state.recordConversion(goal, hi, lo, day + 1, (day + 1) * DAY_MS + 60_000, span)
      entries++
    }
    if (i > 0 && i % 1_000_000 === 0) progress(`${i / 1e6} M of ${n / 1e6} M converted sessions`)
  }
  for (const state of parts) state.takeDirty()
  return { parts, entries }
}

function measureGoalDays(n) {
  const before = held()
  const { parts, entries } = goalDays(n)
  const after = held()
  const d = delta(before, after)
  let estimate = 0
  let multiDay = 0
  for (const p of parts) {
    for (const g of p.goals.values()) {
      estimate += g.memoryBytes()
      multiDay += g.multiDayCount
    }
  }
  const r = {
    convertedSessions: n, entries, multiDaySessions: multiDay, ...d,
    bytesPerConvertedSession: d.total / n, bytesPerEntry: d.total / entries,
    memoryBytesEstimate: estimate, keepAlive: parts.length,
  }
  progress(`${n.toLocaleString('en-US')} converted sessions: ${(d.total / n).toFixed(1)} B each (heap ${(d.heapUsed / n).toFixed(1)} + array buffers ${(d.arrayBuffers / n).toFixed(1)})`)
  return r
}

/** `count` site-day counters of `size` sessions each; bytes per counter. */
function measureCounters(size, count) {
  const before = held()
  const counters = []
  let k = 0
  for (let c = 0; c < count; c++) {
    const counter = new SessionCounter(o.exactThreshold)
    for (let i = 0; i < size; i++) {
      const lo = fmix32(k++ ^ 0x632be5ab)
      counter.add(fmix32(lo ^ 0x85157af5), lo)
    }
    counters.push(counter)
  }
  const after = held()
  const d = delta(before, after)
  return {
    sessions: size, counters: count, mode: counters[0].isExact ? 'exact' : 'HyperLogLog',
    bytesPerCounter: d.total / count, memoryBytesEstimate: counters[0].memoryBytes(), bytesPerSession: d.total / count / size,
  }
}

/** Hot session summaries as the processor holds them: a SessionTable. */
function measureSummaries(count) {
  const before = held()
  const table = new SessionTable()
  const now = Date.now()
  for (let i = 0; i < count; i++) {
    const lo = fmix32(i ^ 0x3c6ef372)
    const hi = fmix32(lo ^ 0xa54ff53a)
    const e = {
      type: 'pageview', site_id: 'shop', session_id: `s-${hi.toString(36)}${lo.toString(36)}`, visitor_id: `v-${lo.toString(36)}`,
      path: `/products/${i % 500}`, referrer: i % 3 ? 'https://www.google.com/' : undefined,
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
      screen: { width: 1920 }, ts: now - (i % 7_200_000), received_at: now,
    }
    const slot = table.insert(hi, lo, e)
    table.fold(slot, e, e.path)
    table.firstSight(slot, SEEN_PAGE, e.path)
  }
  const after = held()
  const d = delta(before, after)
  return { sessions: count, bytesPerSession: d.total / count, memoryBytesEstimate: table.memoryBytes() / count, keepAlive: table.size }
}

try {
  const goalDaysResults = []
  for (const n of o.sizes) {
    progress(`building ${n.toLocaleString('en-US')} converted sessions (${o.goals} goals × ${o.days} days × ${o.partitions} partitions)`)
    goalDaysResults.push(measureGoalDays(n))
  }
  progress('site-day counters')
  const counters = [
    measureCounters(1_000, 200),
    measureCounters(o.exactThreshold, 50),
    measureCounters(o.exactThreshold + 1, 50),
    measureCounters(100_000, 20),
  ]
  progress('hot session summaries')
  const summaries = measureSummaries(200_000)
  send({ type: 'result', goalDays: goalDaysResults, counters, summaries })
  process.exit(0)
} catch (err) {
  send({ type: 'error', error: err?.stack ?? String(err) })
  process.exit(1)
}
