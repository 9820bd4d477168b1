/**
 * Child process of the query bench (started by query.mjs with an IPC channel, pinned to the
 * server core). Builds one site's state in-process, times goalList() in-process, then serves
 * over HTTP with the service's own HttpServer from dist/http:
 *
 *   GET /api/goals?days=N  goalList() on the state, answered as the real route answers it
 *   GET /baseline          the same answer precomputed once: same server, same bytes, no query
 *
 * so that /api/goals against /baseline isolates the cost of the query and its serialization.
 * argv[2]: JSON settings { sessionsPerDay, goals, days, partitions, multiDayShare, exactThreshold,
 * inProcessSeconds }. Messages out: progress, ready (with the in-process figures), error.
 */
import { HttpServer } from '../dist/http/index.js'
import { goalList, totalSessions, windowOf } from '../dist/query/index.js'
// not re-exported by the folder's index: the bench times the two halves of goalList apart
import { conversions } from '../dist/query/queries.js'
// the goal analytics' partials, timed over every partition as one owner of them all computes them
import { reportPartial, reportPoints } from '../dist/query/report.js'
import { overlapPartial, overlapParts } from '../dist/query/overlap.js'
import { funnelPartial, funnelParts } from '../dist/query/funnel.js'
import { runInSlices } from '../dist/query/parts.js'
import { funnelByDays, overlapByDays, warmPairs } from '../dist/query/day-joins.js'
import { linkSessionsAcross } from '../dist/stream/index.js'
import { fmix32 } from './lib/synthetic-state.mjs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { DAY_MS } from '../dist/goals/index.js'
import { buildState } from './lib/synthetic-state.mjs'
import { breakdownClasses, prepareBreakdowns } from './lib/breakdown-state.mjs'
import { breakdownPartial } from '../dist/query/breakdown.js'
import { warmSessionsPerValue } from '../dist/query/value-sessions.js'
import { warmSettledCorrections } from '../dist/query/counted-conversions.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { summarize } from './lib/stats.mjs'

const o = JSON.parse(process.argv[2])
const send = (m) => process.send?.(m)
const progress = (text) => (process.send ? send({ type: 'progress', text }) : process.stderr.write(`${text}\n`))

/** Calls `fn` for `seconds` (at least `minRuns` times), after a warm-up; returns ms samples. */
function timeIt(fn, seconds, minRuns = 20) {
  for (let i = 0; i < 20; i++) fn()
  const samples = []
  const until = performance.now() + seconds * 1000
  while (samples.length < minRuns || performance.now() < until) {
    const t = performance.now()
    fn()
    samples.push(performance.now() - t)
  }
  return summarize(samples)
}

/**
 * Runs a query the way the API does (a partition at a time, each in slices across event-loop
 * turns) `runs` times; returns its latency samples and the event loop's longest delay meanwhile.
 */
async function sliced(parts, makeParts, runs) {
  const samples = []
  let maxDelayMs = 0
  for (let r = 0; r < runs; r++) {
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    const t = performance.now()
    for (const state of parts) {
      await new Promise((resolve) => setImmediate(resolve))
      await runInSlices(makeParts(state))
    }
    samples.push(performance.now() - t)
    delay.disable()
    maxDelayMs = Math.max(maxDelayMs, delay.max / 1e6)
  }
  return { ...summarize(samples), maxDelayMs }
}

/**
 * Runs a query by days (day-joins.ts) the way the API does, a partition at a time, `runs` times;
 * `before(r)` runs untimed first (it folds into today, so today is walked again as under ingest).
 * Returns latency samples and the event loop's longest delay meanwhile.
 */
async function byDays(parts, query, runs, before) {
  const samples = []
  let maxDelayMs = 0
  for (let r = 0; r < runs; r++) {
    before?.(r)
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    const t = performance.now()
    for (const state of parts) {
      await new Promise((resolve) => setImmediate(resolve))
      await query(state, r)
    }
    samples.push(performance.now() - t)
    delay.disable()
    maxDelayMs = Math.max(maxDelayMs, delay.max / 1e6)
  }
  return { ...summarize(samples), maxDelayMs }
}

const mb = (bytes) => Math.round(bytes / 2 ** 20)

/**
 * Warm questions asked of each kind: enough that a one-time cost of the compiler's (as once, a
 * re-optimisation thrown away some hundred questions in: two slow questions, never again) cannot
 * be the p99; the maximum and the loop's longest hold still show such a cost.
 */
const WARM_QUESTIONS = 600

/** every k-th goal, so a smaller goal list keeps the same mix of conversion rates */
const spread = (goals, n) => goals.filter((_, i) => i % Math.max(1, Math.floor(goals.length / n)) === 0).slice(0, n)

async function main() {
  const today = Math.floor(Date.now() / DAY_MS)
  // a fixed "now": the window cannot move under the bench if it runs across midnight
  const now = today * DAY_MS + DAY_MS / 2
  const started = performance.now()
  const classes = breakdownClasses('bench-site')
  const state = buildState({
    siteId: 'bench-site', partitions: o.partitions, days: o.days, sessionsPerDay: o.sessionsPerDay, goals: o.goals,
    multiDayShare: o.multiDayShare, today, exactThreshold: o.exactThreshold, progress, onSession: classes.onSession,
  })
  const buildSeconds = (performance.now() - started) / 1000
  globalThis.gc?.()
  const memory = process.memoryUsage()
  const { parts, site, goals, stats } = state

  const answer = goalList(parts, site, goals, o.days, now)
  const exact = answer.goals.every((g, i) => g.conversions === stats.converted[i])
  const totalError = answer.total_sessions / stats.sessions - 1
  const multiDayEntries = parts.reduce((n, p) => n + [...p.goals.values()].reduce((m, g) => m + g.multiDayCount, 0), 0)
  progress(`state: ${(stats.entries / 1e6).toFixed(1)} M goal-day entries, ${multiDayEntries} multi-day index entries, built in ${buildSeconds.toFixed(1)} s; timing goalList in-process`)

  const w = windowOf(site, o.days, now)
  const w2 = windowOf(site, o.days - 1, now)
  // two windows taken in turn defeat every per-window cache: what a query costs when the cache is
  // cold (after a change of the cached days, a restart, or two dashboards on different windows)
  const alternating = (fn) => {
    let flip = 0
    return () => {
      flip ^= 1
      return fn(flip ? w2 : w)
    }
  }
  const inProcess = {
    goalList: timeIt(() => goalList(parts, site, goals, o.days, now), o.inProcessSeconds),
    goalListColdCache: (() => {
      let flip = 0
      return timeIt(() => goalList(parts, site, goals, o.days - (flip ^= 1), now), o.inProcessSeconds / 2)
    })(),
    totalSessionsColdCache: timeIt(alternating((win) => totalSessions(parts, site.site_id, win)), o.inProcessSeconds / 4),
    conversionsColdCache: timeIt(alternating((win) => {
      let n = 0
      for (const g of goals) n += conversions(parts, g.id, win)
      return n
    }), o.inProcessSeconds / 4),
    totalSessionsOnly: timeIt(() => totalSessions(parts, site.site_id, w), o.inProcessSeconds / 2),
    conversionsOnly: timeIt(() => {
      let n = 0
      for (const g of goals) n += conversions(parts, g.id, w)
      return n
    }, o.inProcessSeconds / 2),
    stringify: timeIt(() => JSON.stringify(answer), o.inProcessSeconds / 4),
  }
  // the goal analytics over the whole window: one goal's series, two goals' overlap, a 3-step funnel
  // (the goals with the most conversions, so the walks are as long as this state makes them)
  const busiest = goals.map((g, i) => ({ g, n: stats.converted[i] })).sort((a, b) => b.n - a.n).map((x) => x.g.id)
  const { points } = reportPoints(w, 'day', site.timezone)
  const measureAnalytics = async (label) => {
    const a = {
      report: timeIt(() => reportPartial(parts, { kind: 'report', site_id: site.site_id, goal_id: busiest[0], window: w, interval: 'day', points }), o.inProcessSeconds / 2, 5),
      overlap: timeIt(() => overlapPartial(parts, { kind: 'overlap', site_id: site.site_id, a: busiest[0], b: busiest[1], window: w }), o.inProcessSeconds / 2, 3),
      funnel: timeIt(() => funnelPartial(parts, { kind: 'funnel', site_id: site.site_id, steps: busiest.slice(0, 3), window_ms: 3_600_000, window: w }), o.inProcessSeconds / 2, 3),
      walked: { overlap: Math.min(stats.converted[goals.findIndex((g) => g.id === busiest[0])], stats.converted[goals.findIndex((g) => g.id === busiest[1])]), funnel: stats.converted[goals.findIndex((g) => g.id === busiest[0])] },
    }
    progress(`analytics in-process over ${o.days} days, ${label}: report p99 ${a.report.p99.toFixed(2)} ms, overlap p99 ${a.overlap.p99.toFixed(1)} ms (walking ${a.walked.overlap} sessions), funnel p99 ${a.funnel.p99.toFixed(1)} ms (${a.walked.funnel} entries)`)
    a.overlapSliced = await sliced(parts, (s) => overlapParts(s, { kind: 'overlap', site_id: site.site_id, a: busiest[0], b: busiest[1], window: w }), 5)
    a.funnelSliced = await sliced(parts, (s) => funnelParts(s, { kind: 'funnel', site_id: site.site_id, steps: busiest.slice(0, 3), window_ms: 3_600_000, window: w }), 5)
    progress(`  as the API ran them before, walking every session in slices: overlap p50 ${a.overlapSliced.p50.toFixed(1)} ms with the event loop held at most ${a.overlapSliced.maxDelayMs.toFixed(1)} ms; funnel p50 ${a.funnelSliced.p50.toFixed(1)} ms, held at most ${a.funnelSliced.maxDelayMs.toFixed(1)} ms`)
    // by days, as the API runs them now. Cold: a pair (or a funnel window) not asked before, every
    // day walked; warm: asked again after new conversions today, so today is walked again
    const win = { window: w, site_id: site.site_id }
    const funnel = (ms) => ({ kind: 'funnel', ...win, steps: busiest.slice(0, 3), window_ms: ms })
    // the second run asks pairs and funnels the warming filled: the first question after warming
    const tag = label === 'every day a hash table' ? 1 : 2
    a.overlapCold = await byDays(parts, (s, r) => overlapByDays(s, { kind: 'overlap', ...win, a: busiest[0], b: busiest[2 + r + 10 * tag] }), 5)
    a.funnelCold = await byDays(parts, (s, r) => funnelByDays(s, funnel(3_600_000 + (r + 10 * tag) * 60_000)), 5)
    await byDays(parts, (s) => overlapByDays(s, { kind: 'overlap', ...win, a: busiest[0], b: busiest[1] }), 1)
    await byDays(parts, (s) => funnelByDays(s, funnel(3_600_000)), 1)
    a.overlapWarm = await byDays(parts, (s) => overlapByDays(s, { kind: 'overlap', ...win, a: busiest[0], b: busiest[1] }), WARM_QUESTIONS, convertToday)
    a.funnelWarm = await byDays(parts, (s) => funnelByDays(s, funnel(3_600_000)), WARM_QUESTIONS, convertToday)
    progress(`  by days: overlap cold p50 ${a.overlapCold.p50.toFixed(1)} ms, warm p50 ${a.overlapWarm.p50.toFixed(1)} / p99 ${a.overlapWarm.p99.toFixed(1)} / max ${a.overlapWarm.max.toFixed(1)} ms, loop held at most ${a.overlapWarm.maxDelayMs.toFixed(1)} ms (cold ${a.overlapCold.maxDelayMs.toFixed(1)}); funnel cold p50 ${a.funnelCold.p50.toFixed(1)} ms, warm p50 ${a.funnelWarm.p50.toFixed(1)} / p99 ${a.funnelWarm.p99.toFixed(1)} / max ${a.funnelWarm.max.toFixed(1)} ms, loop held at most ${a.funnelWarm.maxDelayMs.toFixed(1)} ms (cold ${a.funnelCold.maxDelayMs.toFixed(1)})`)
    return a
  }
  // what a restore does before overlap and funnels go by days: link sessions across the goals
  const linkStarted = performance.now()
  for (const state of parts) {
    await linkSessionsAcross(state, goals.map((g) => g.id))
    state.linkedAcross = true
  }
  const linkSeconds = (performance.now() - linkStarted) / 1000
  const linkedEntries = parts.reduce((n, p) => n + [...p.goals.values()].reduce((m, g) => m + g.multiDayCount, 0), 0)
  progress(`linked sessions across goals in ${linkSeconds.toFixed(1)} s: side indexes ${multiDayEntries} → ${linkedEntries} entries`)
  /**
   * New sessions converting the three busiest goals today, in every partition: today changes
   * between queries. As in the built state, a share of them began yesterday and converted then too.
   */
  let fresh = 0
  /** the i-th of a round's new sessions converting today, from a seed of its own: its hash, partition and time */
  const freshSession = (seed, i) => {
    const lo = fmix32(seed + fresh++)
    const hi = fmix32(lo ^ 0x2c1b3c6d)
    return { hi, lo, state: parts[fmix32(hi ^ 0x68e31da4) % parts.length], ts: now - 60_000 + (i % 60) * 1000 }
  }
  const convertToday = () => {
    for (let i = 0; i < 200; i++) {
      const { hi, lo, state, ts } = freshSession(0x7f4a7c15, i)
      const spans = i % Math.round(1 / o.multiDayShare) === 0
      const span = spans ? [today - 1, today] : [today, today]
      for (const id of busiest.slice(0, 3)) {
        if (spans) state.recordConversion(id, hi, lo, today - 1, ts - DAY_MS / 2, span)
        state.recordConversion(id, hi, lo, today, ts, span)
      }
    }
  }
  /**
   * Breakdowns of the two busiest goals over the window, as the API runs them (a partition at a
   * time): their conversions counted by value first (the pass a restore runs), the summaries of
   * their sessions on several days in LevelDB. First: the first question (nothing of the store
   * kept yet); warm: asked again after 200 new sessions converted today, WARM_QUESTIONS times, by five
   * attributes in turn.
   */
  const measureBreakdowns = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'goalpost-bench-breakdown-'))
    try {
      const ids = busiest.slice(0, 2)
      const prep = await prepareBreakdowns(parts, site.site_id, goals.map((g) => g.id), ids, classes, dir)
      progress(`breakdowns: counted ${ids.length} goals by value in ${prep.tallySeconds.toFixed(1)} s (${(prep.summariesRead / 1e6).toFixed(1)} M sessions' attributes read), wrote ${prep.written} summaries of sessions on several days in ${prep.writeSeconds.toFixed(1)} s`)
      const q = (goal, by) => ({ kind: 'breakdown', site_id: site.site_id, goal_id: goal, window: w, by })
      // exact: every partition's rows add up to its conversions, and the partitions to the goal's
      for (const id of ids) {
        let n = 0
        for (const state of parts) {
          const partial = await breakdownPartial(state, q(id, 'source'), prep.lookup)
          const rows = partial.values.reduce((m, v) => m + v[2], 0)
          if (rows !== partial.conversions) throw new Error(`breakdown rows add up to ${rows}, not ${partial.conversions}`)
          n += partial.conversions
        }
        // the conversions the goal list answers (the questions before this one converted more today)
        const want = parts.reduce((m, state) => m + (state.goals.get(id)?.conversions(w.from, w.to) ?? 0), 0)
        if (n !== want) throw new Error(`breakdown counted ${n} conversions of ${want}`)
      }
      const dims = ['source', 'country', 'entry_page', 'browser', 'utm_campaign']
      // never asked, nothing kept: the sessions per value of the window's past days are united in turns
      const unwarmed = await byDays(parts, (s) => breakdownPartial(s, q(ids[1], 'referrer'), prep.lookup), 1)
      // what the service's warming pass does each minute: every dimension's past unions of the window
      const warmStarted = performance.now()
      for (const state of parts) await warmSessionsPerValue(state, site.site_id, w)
      const warmSeconds = (performance.now() - warmStarted) / 1000
      // and the corrections of the goals broken down above (the exactness check), every attribute
      const settleStarted = performance.now()
      const settleDelay = monitorEventLoopDelay({ resolution: 1 })
      settleDelay.enable()
      for (const state of parts) await warmSettledCorrections(state, goals.map((g) => g.id), w, prep.lookup)
      settleDelay.disable()
      const settle = { seconds: (performance.now() - settleStarted) / 1000, maxDelayMs: settleDelay.max / 1e6 }
      globalThis.gc?.()
      const warmHeap = process.memoryUsage().heapUsed
      // first after warming: the sessions on several days of this goal not read from the store yet
      const first = await byDays(parts, (s) => breakdownPartial(s, q(ids[1], 'country'), prep.lookup), 1)
      const convertTodayCounted = () => {
        for (let i = 0; i < 200; i++) {
          const { hi, lo, state, ts } = freshSession(0x1f4a7c15, i)
          const values = classes.valuesOf(hi, lo)
          state.countValues(site.site_id, state.site(site.site_id), today, values, hi, lo)
          for (const id of ids) if (state.recordConversion(id, hi, lo, today, ts, [today, today])) state.talliesOf(id).add(today, values, hi, lo)
        }
      }
      const warm = await byDays(parts, (s, r) => breakdownPartial(s, q(ids[0], dims[r % dims.length]), prep.lookup), WARM_QUESTIONS, convertTodayCounted)
      progress(`  breakdown not warmed ${unwarmed.p50.toFixed(1)} ms (loop held at most ${unwarmed.maxDelayMs.toFixed(1)} ms); warming the window's 10 dimensions ${warmSeconds.toFixed(1)} s, heap ${(warmHeap / 2 ** 20).toFixed(0)} MiB; the asked goals' corrections of every dimension ${settle.seconds.toFixed(2)} s (loop held at most ${settle.maxDelayMs.toFixed(1)} ms); first ${first.p50.toFixed(1)} ms (loop held at most ${first.maxDelayMs.toFixed(1)} ms); warm p50 ${warm.p50.toFixed(1)} / p99 ${warm.p99.toFixed(1)} / max ${warm.max.toFixed(1)} ms, loop held at most ${warm.maxDelayMs.toFixed(1)} ms`)
      await prep.store.close()
      return { goals: ids, tallySeconds: prep.tallySeconds, summariesRead: prep.summariesRead, summariesWritten: prep.written, unwarmed, warmSeconds, warmHeap, settle, first, warm }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
  const analytics = await measureAnalytics('every day a hash table')
  analytics.linking = { seconds: linkSeconds, entriesBefore: multiDayEntries, entriesAfter: linkedEntries }
  // what the service's retention pass does to days before yesterday: pack their goal sets
  const packStarted = performance.now()
  let packedSets = 0
  let longestPackMs = 0
  for (const state of parts) {
    for (const g of state.goals.values()) {
      for (const day of g.days()) {
        if (day >= today - 1) continue
        const t = performance.now()
        g.dayMap(day).pack()
        longestPackMs = Math.max(longestPackMs, performance.now() - t)
        packedSets++
      }
    }
  }
  const packSeconds = (performance.now() - packStarted) / 1000
  globalThis.gc?.()
  const packedMemory = process.memoryUsage()
  progress(`packed ${packedSets} goal-day sets in ${packSeconds.toFixed(1)} s (longest ${longestPackMs.toFixed(1)} ms): heap ${mb(memory.heapUsed)} → ${mb(packedMemory.heapUsed)} MiB, array buffers ${mb(memory.arrayBuffers)} → ${mb(packedMemory.arrayBuffers)} MiB, RSS ${mb(memory.rss)} → ${mb(packedMemory.rss)} MiB`)
  // what the service's warming pass does (InteractiveQueries.warm): every pair's days, and the
  // funnels' — here the five funnels the packed run's cold questions then ask
  const warmStarted = performance.now()
  const pairsStarted = performance.now()
  for (const state of parts) await warmPairs(state, goals.map((g) => g.id))
  const pairsSeconds = (performance.now() - pairsStarted) / 1000
  for (const state of parts) {
    for (let r = 0; r < 5; r++) {
      await funnelByDays(state, { kind: 'funnel', site_id: site.site_id, steps: busiest.slice(0, 3), window_ms: 3_600_000 + (r + 20) * 60_000, window: { from: w.from, to: today } })
    }
  }
  const warmSeconds = (performance.now() - warmStarted) / 1000
  globalThis.gc?.()
  const warmHeap = process.memoryUsage().heapUsed
  progress(`warmed every pair of ${goals.length} goals in ${pairsSeconds.toFixed(1)} s, and five funnels: ${warmSeconds.toFixed(1)} s in all; heap ${mb(packedMemory.heapUsed)} → ${mb(warmHeap)} MiB`)
  analytics.packed = await measureAnalytics('days before yesterday packed, joins warmed')
  analytics.warming = { pairsSeconds, seconds: warmSeconds, heapUsed: warmHeap }
  analytics.packing = { sets: packedSets, seconds: packSeconds, longestMs: longestPackMs, heapUsed: packedMemory.heapUsed, arrayBuffers: packedMemory.arrayBuffers, rss: packedMemory.rss }
  analytics.breakdowns = await measureBreakdowns()
  // the cost model: days × goals, at this session count
  const grid = []
  for (const days of [1, 7, o.days]) {
    for (const n of [Math.min(10, goals.length), goals.length]) {
      const subset = spread(goals, n)
      grid.push({ days, goals: subset.length, ms: timeIt(() => goalList(parts, site, subset, days, now), o.inProcessSeconds / 4) })
    }
  }

  const baselineBody = JSON.stringify(answer)
  const server = new HttpServer({ onError: (err) => process.stderr.write(`query-server: ${err?.stack ?? err}\n`) })
  server.route('GET', '/api/goals', (req) => {
    const days = Number(req.query.get('days') ?? o.days)
    return { status: 200, body: goalList(parts, site, goals, days, now) }
  })
  server.route('GET', '/baseline', () => ({ status: 200, headers: { 'Content-Type': 'application/json' }, body: baselineBody }))
  const port = await server.listen('127.0.0.1', 0)

  send({
    type: 'ready',
    port,
    build: { seconds: buildSeconds, ...stats, converted: undefined, multiDayEntries, heapUsed: memory.heapUsed, arrayBuffers: memory.arrayBuffers, rss: memory.rss },
    correctness: { conversionsExact: exact, totalSessions: answer.total_sessions, trueSessions: stats.sessions, totalSessionsError: totalError },
    bodyBytes: Buffer.byteLength(baselineBody),
    inProcess,
    analytics,
    grid,
  })
  process.on('message', (m) => {
    if (m?.type === 'stop') {
      server.close()
      process.exit(0)
    }
  })
}

main().catch((err) => {
  send({ type: 'error', error: err?.stack ?? String(err) })
  process.exit(1)
})
