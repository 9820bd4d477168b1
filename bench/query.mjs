/**
 * GET /api/goals cost: one site with `goals` goals and `days` days of state at each of `scales`
 * sessions per day, built in-process in a child (query-server.mjs, pinned to the server core).
 * goalList() is timed in-process, then served by the service's HttpServer and loaded with
 * autocannon from another child on the load core, beside a baseline route that answers the same
 * bytes precomputed. Two or more scales show whether the cost follows sessions or days × goals.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runLoad } from './lib/load.mjs'
import { SERVER_CORE, log, nextMessage, start, stop } from './lib/proc.mjs'
import { ratio } from './lib/stats.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const EXACT_THRESHOLD = 8192
/** the largest state (1 M sessions/day × 30 days × 50 goals) holds ~80 M entries: ~2.2 GB, mostly typed arrays */
const HEAP_MB = 16_384

/** @param o { scales, goals, days, partitions, multiDayShare, seconds, driver } */
export async function benchQuery(o) {
  const work = await mkdtemp(join(tmpdir(), 'goalpost-bench-'))
  try {
    const scales = []
    for (const sessionsPerDay of o.scales) scales.push(await measureScale(o, sessionsPerDay, work))
    return {
      setup: { goals: o.goals, days: o.days, partitions: o.partitions, multiDayShare: o.multiDayShare, seconds: o.seconds, exactThreshold: EXACT_THRESHOLD, driver: o.driver },
      scales,
      // each scale against the one before it: ×1 would mean the cost ignores the session count
      growth: scales.slice(1).map((large, i) => {
        const small = scales[i]
        return {
          from: small.sessionsPerDay,
          to: large.sessionsPerDay,
          sessionsFactor: large.sessionsPerDay / small.sessionsPerDay,
          inProcessP50Factor: ratio(large.inProcess.goalList.p50, small.inProcess.goalList.p50),
          inProcessColdP50Factor: ratio(large.inProcess.goalListColdCache.p50, small.inProcess.goalListColdCache.p50),
          httpP99Factor: ratio(large.http.c1.query.latencyMs.p99, small.http.c1.query.latencyMs.p99),
        }
      }),
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

async function measureScale(o, sessionsPerDay, work) {
  const label = `${(sessionsPerDay / 1e6).toLocaleString('en-US')} M sessions/day`
  log(`query: building ${o.goals} goals × ${o.days} days × ${label} in ${o.partitions} partitions`)
  const settings = {
    sessionsPerDay, goals: o.goals, days: o.days, partitions: o.partitions, multiDayShare: o.multiDayShare,
    exactThreshold: EXACT_THRESHOLD, inProcessSeconds: Math.min(3, o.seconds),
  }
  const child = start(
    [process.execPath, `--max-old-space-size=${HEAP_MB}`, '--expose-gc', join(HERE, 'query-server.mjs'), JSON.stringify(settings)],
    { core: SERVER_CORE, ipc: true },
  )
  const onProgress = (m) => m?.type === 'progress' && log(`  ${label}: ${m.text}`)
  child.on('message', onProgress)
  try {
    const ready = await nextMessage(child, 'ready')
    const ip = ready.inProcess
    log(`  ${label}: goalList in-process p50 ${ip.goalList.p50.toFixed(2)} ms, p99 ${ip.goalList.p99.toFixed(2)} ms; multi-day cache cold p50 ${ip.goalListColdCache.p50.toFixed(2)} ms (total_sessions ${ip.totalSessionsOnly.p50.toFixed(2)} ms, conversions ${ip.conversionsOnly.p50.toFixed(2)} ms, JSON ${ip.stringify.p50.toFixed(3)} ms); answer ${ready.bodyBytes} B`)
    const base = `http://127.0.0.1:${ready.port}`
    const load = (path, connections, name) =>
      runLoad({ driver: o.driver, url: `${base}${path}`, method: 'GET', headers: {}, connections, seconds: o.seconds, label: `${label} ${name}`, workDir: work })
    const http = {}
    // baseline, query, baseline: the baseline brackets the query run against drift
    for (const c of [1, 16]) {
      const before = await load('/baseline', c, `baseline c=${c}`)
      const query = await load(`/api/goals?days=${o.days}`, c, `GET /api/goals c=${c}`)
      const after = await load('/baseline', c, `baseline c=${c} (again)`)
      const baseline = { okPerSec: (before.okPerSec + after.okPerSec) / 2, latencyMs: meanLatency(before.latencyMs, after.latencyMs), runs: [before, after] }
      http[`c${c}`] = { connections: c, baseline, query, ratios: { rps: ratio(query.okPerSec, baseline.okPerSec), p50: ratio(query.latencyMs.p50, baseline.latencyMs.p50), p99: ratio(query.latencyMs.p99, baseline.latencyMs.p99) } }
      log(`  ${label} c=${c}: /api/goals ${Math.round(query.okPerSec)} req/s p50 ${query.latencyMs.p50.toFixed(2)} ms p99 ${query.latencyMs.p99.toFixed(2)} ms; baseline ${Math.round(baseline.okPerSec)} req/s p50 ${baseline.latencyMs.p50.toFixed(2)} ms p99 ${baseline.latencyMs.p99.toFixed(2)} ms`)
    }
    child.send({ type: 'stop' })
    await child.exited
    return { sessionsPerDay, build: ready.build, correctness: ready.correctness, bodyBytes: ready.bodyBytes, inProcess: ip, analytics: ready.analytics, grid: ready.grid, http }
  } finally {
    child.off('message', onProgress)
    await stop(child)
  }
}

function meanLatency(a, b) {
  const out = {}
  for (const k of Object.keys(a)) out[k] = (a[k] + b[k]) / 2
  return out
}
