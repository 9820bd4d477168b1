/** The tables `run.mjs` prints, one per bench, each ending in its targets: met or missed. */
import { bytes, int, ms, pct, table } from './lib/table.mjs'

const verdict = (met) => (met ? 'met' : 'MISSED')

export function reportIngest(r) {
  const lines = [`== ingest: ${r.setup.servers.join(', ')} side by side (${r.setup.driver}, ${r.setup.seconds} s per server and phase, client timeout 30 s, data on ${r.setup.dataDirFs ?? 'n/a'}; mix ${r.setup.mix})`]
  const head = ['server', 'events/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'sock err', 'server core', 'events/core-s', 'load core', 'RSS', 'peak RSS', 'loop delay max', 'loop p99']
  for (const p of r.phases) {
    const rows = Object.values(p.runs).map((x) => [
      x.label, int(x.eventsPerSec), ms(x.latencyMs.p50), ms(x.latencyMs.p99), ms(x.latencyMs.max, 0), int(x.non2xx), int(x.errors),
      pct(x.serverCpu), int(x.eventsPerCoreSecond), pct(x.loadCpu), bytes(x.memory.rss), bytes(x.memory.peakRss),
      x.loopDelayMs ? `${ms(x.loopDelayMs.max, 0)} ms` : '', x.loopDelayMs ? `${ms(x.loopDelayMs.p99, 0)} ms` : '',
    ])
    const q = p.ratios
    lines.push('', `${p.name}${p.eventsPerRequest > 1 ? ` (POST /api/events, ${p.eventsPerRequest} events each)` : ' (POST /api/event)'}, ${p.shape === 'fresh' ? 'a new session per request' : `${p.eventsPerSession} events per session`}:`)
    lines.push(table([head, ...rows]))
    lines.push(`goalpost / durable min ${ratioText(q.serviceToDurable, q.serviceToDurablePerCore)}; durable min / bare ${ratioText(q.durableToBare, q.durableToBarePerCore)}${Number.isFinite(q.layerToBare) ? `; HTTP layer / bare ${ms(q.layerToBare)}` : ''}${Number.isFinite(q.floorToDurable) ? `; floor / durable min ${ratioText(q.floorToDurable, q.floorToDurablePerCore)}` : ''}`)
    if (p.verification) lines.push(`counted what it acknowledged: ${p.verification.ok ? 'yes' : 'NO'}`)
  }
  lines.push('', ...ingestTargets(r))
  return lines.join('\n')
}

const ratioText = (rate, perCore) => (Number.isFinite(rate) ? `${ms(rate)} (${ms(perCore)} per server CPU second)` : 'n/a')

/** the targets of the ingest work, each against the figures of this run */
function ingestTargets(r) {
  const singles = r.phases.filter((p) => p.eventsPerRequest === 1 && p.runs.service && p.runs.durable)
  const out = []
  for (const [shape, target] of [['fresh', 0.8], ['mix', 0.9]]) {
    const ps = singles.filter((p) => p.shape === shape)
    if (ps.length) out.push(`target ${shape} sessions: goalpost / durable min ≥ ${target}: ${verdict(ps.every((p) => p.ratios.serviceToDurable >= target))} (${ps.map((p) => `${ms(p.ratios.serviceToDurable)} at ${p.connections}`).join(', ')})`)
    // the floor server does only what every event must: where it stays under the target, no build reaches it
    const floored = ps.filter((p) => Number.isFinite(p.ratios.floorToDurable))
    if (floored.length) {
      const under = floored.filter((p) => Math.max(p.ratios.floorToDurable, p.ratios.floorToDurablePerCore) < target)
      out.push(`  the floor server / durable min: ${floored.map((p) => `${ms(p.ratios.floorToDurable)} (${ms(p.ratios.floorToDurablePerCore)} per CPU second) at ${p.connections}`).join(', ')} — ${under.length ? `under ${target} by both measures at ${under.map((p) => p.connections).join(' and ')} connections: out of reach there in this run` : `not under ${target} by both measures: not shown out of reach`}`)
    }
  }
  if (singles.length) {
    const p99 = singles.map((p) => ({ p, got: p.runs.service.latencyMs.p99, limit: 2 * p.runs.durable.latencyMs.p99 + 50 }))
    out.push(`target p99 ≤ 2 × durable min's + 50 ms: ${verdict(p99.every((x) => x.got <= x.limit))} (${p99.map((x) => `${ms(x.got, 0)} ≤ ${ms(x.limit, 0)} ms`).join(', ')})`)
  }
  const delays = r.phases.map((p) => p.runs.service?.loopDelayMs?.max).filter(Number.isFinite)
  if (delays.length) out.push(`target event-loop delay ≤ 50 ms: ${verdict(Math.max(...delays) <= 50)} (max ${ms(Math.max(...delays), 0)} ms over these runs; the target is for a 4-minute saturation)`)
  const batch = r.phases.find((p) => p.eventsPerRequest > 1)?.runs.service
  if (batch) out.push(`target batches ≥ 300k events/s: ${verdict(batch.eventsPerSec >= 300_000)} (${int(batch.eventsPerSec)})`)
  const checked = r.phases.filter((p) => p.verification)
  if (checked.length) out.push(`counted what it acknowledged in every phase: ${checked.every((p) => p.verification.ok) ? 'yes' : 'NO'}; clean stop: ${r.cleanStop ? 'yes' : 'NO'}`)
  return out
}

const perDay = (n) => (n >= 1e6 ? `${n / 1e6} M` : `${n / 1e3} k`)

export function reportQuery(r) {
  const u = r.setup
  const head = ['sessions/day', 'entries', 'multi-day idx', 'goalList p50', 'p99', 'total_sessions', 'conversions', 'JSON', 'exact', 'total err']
  const inproc = r.scales.map((s) => [
    perDay(s.sessionsPerDay), int(s.build.entries), int(s.build.multiDayEntries), ms(s.inProcess.goalList.p50), ms(s.inProcess.goalList.p99),
    ms(s.inProcess.totalSessionsOnly.p50), ms(s.inProcess.conversionsOnly.p50), ms(s.inProcess.stringify.p50, 3),
    s.correctness.conversionsExact ? 'yes' : 'NO', pct(s.correctness.totalSessionsError, 2),
  ])
  const coldHead = ['sessions/day', 'goalList p50', 'p99', 'total_sessions p50', 'conversions p50']
  const cold = r.scales.map((s) => [
    perDay(s.sessionsPerDay), ms(s.inProcess.goalListColdCache.p50), ms(s.inProcess.goalListColdCache.p99),
    ms(s.inProcess.totalSessionsColdCache.p50), ms(s.inProcess.conversionsColdCache.p50),
  ])
  const httpRows = []
  for (const s of r.scales) {
    for (const h of Object.values(s.http)) {
      httpRows.push([
        `${perDay(s.sessionsPerDay)}, c=${h.connections}`, int(h.query.okPerSec), ms(h.query.latencyMs.p50), ms(h.query.latencyMs.p99),
        int(h.baseline.okPerSec), ms(h.baseline.latencyMs.p50), ms(h.baseline.latencyMs.p99), pct(h.ratios.rps), `${ms(h.ratios.p99, 1)}×`,
      ])
    }
  }
  const gridHead = ['days × goals', ...r.scales.map((s) => `${perDay(s.sessionsPerDay)}/day p50 ms`)]
  const gridRows = r.scales[0].grid.map((g, i) => [`${g.days} × ${g.goals}`, ...r.scales.map((s) => ms(s.grid[i].ms.p50, 3))])
  const largest = r.scales[r.scales.length - 1]
  const p99 = largest.http.c1.query.latencyMs.p99
  const lines = [
    `== query: GET /api/goals, ${u.goals} goals × ${u.days} days, ${u.partitions} partitions, ${pct(u.multiDayShare, 1)} of sessions converting on two days`,
    'in-process, window cached (ms; total_sessions, conversions and JSON are p50 of each part alone):',
    table([head, ...inproc]),
    '',
    'in-process, window caches cold (two windows taken in turn; ms):',
    table([coldHead, ...cold]),
    '',
    'over HTTP (autocannon; ms):',
    table([['scale', '/api/goals req/s', 'p50', 'p99', 'baseline req/s', 'p50', 'p99', 'req/s vs baseline', 'p99 vs baseline'], ...httpRows]),
    '',
    'cost model — goalList p50 in-process by window days × goals:',
    table([gridHead, ...gridRows]),
  ]
  lines.push('')
  for (const g of r.growth) {
    lines.push(`${perDay(g.from)} → ${perDay(g.to)} sessions/day (×${ms(g.sessionsFactor, 1)}): goalList p50 ×${ms(g.inProcessP50Factor, 2)} in-process (cold cache ×${ms(g.inProcessColdP50Factor, 2)}), HTTP p99 ×${ms(g.httpP99Factor, 2)} — ×1 means independent of sessions`)
  }
  const worstP99 = Math.max(...r.scales.map((s) => s.http.c1.query.latencyMs.p99))
  lines.push(`target p99 ≤ 10 ms (HTTP, one client, ${perDay(largest.sessionsPerDay)} sessions/day): ${verdict(p99 <= 10)} (${ms(p99)} ms; worst over all scales ${ms(worstP99)} ms; in-process with cold caches ${ms(largest.inProcess.goalListColdCache.p99)} ms)`)
  const last = r.growth[r.growth.length - 1]
  if (last) lines.push(`target cost grows with days × goals, not sessions (${perDay(last.from)} → ${perDay(last.to)}): ${verdict(last.inProcessP50Factor < 1.5 && last.inProcessColdP50Factor < 1.5)} (×${ms(last.inProcessP50Factor, 2)}, cold cache ×${ms(last.inProcessColdP50Factor, 2)}, for ×${ms(last.sessionsFactor, 1)} sessions)`)
  return lines.join('\n')
}

export function reportMemory(r) {
  const u = r.setup
  const gd = r.goalDays.map((g) => [
    int(g.convertedSessions), int(g.entries), int(g.multiDaySessions), bytes(g.total), ms(g.bytesPerConvertedSession, 1),
    ms(g.heapUsed / g.convertedSessions, 1), ms(g.arrayBuffers / g.convertedSessions, 1), ms(g.memoryBytesEstimate / g.convertedSessions, 1),
  ])
  const counters = r.counters.map((c) => [int(c.sessions), c.mode, bytes(c.bytesPerCounter), bytes(c.memoryBytesEstimate), ms(c.bytesPerSession, 2)])
  const hll = r.counters.find((c) => c.mode === 'HyperLogLog')
  const exactMax = r.counters.find((c) => c.mode === 'exact' && c.sessions === u.exactThreshold)
  const worst = Math.max(...r.goalDays.map((g) => g.bytesPerConvertedSession))
  return [
    `== memory: GoalDays over ${u.goals} goals × ${u.days} days × ${u.partitions} partitions, ${pct(u.multiDayShare, 1)} converting again the next day (heapUsed + arrayBuffers after full GC)`,
    table([['converted sessions', 'goal-day entries', 'multi-day', 'held', 'B / session', 'heap', 'array buffers', 'memoryBytes() says'], ...gd]),
    '',
    'site-day session counters (one per site, day and partition):',
    table([['sessions', 'mode', 'per counter', 'memoryBytes() says', 'B / session'], ...counters]),
    hll ? `a site with 1 M sessions a day: ${u.days} days × ${u.partitions} partitions × ${bytes(hll.bytesPerCounter)} = ${bytes(u.days * u.partitions * hll.bytesPerCounter)}` : '',
    exactMax ? `largest exact counter (${int(u.exactThreshold)} sessions) holds ${bytes(exactMax.bytesPerCounter)}, ${ms(exactMax.bytesPerCounter / (hll?.bytesPerCounter ?? NaN), 1)}× a HyperLogLog counter` : '',
    `hot session summaries (SessionTable slot, index, pooled strings, slabs): ${ms(r.summaries.bytesPerSession, 0)} B per session`,
    '',
    `target ≤ 200 B per converted session: ${verdict(worst <= 200)} (worst ${ms(worst, 1)} B)`,
  ].filter((l) => l !== '').join('\n')
}

export function reportRetention(r) {
  const u = r.setup
  const sets = (m) => `${int(m.goals.daySetsInMemory)} / ${int(m.goals.daySetsStored)}`
  const memory = r.runs.map((x) => [
    int(x.days), int(x.sessions), int(x.before.goals.conversions), sets(x.before), sets(x.after),
    bytes(x.before.kinds.goals), bytes(x.after.kinds.goals), bytes(x.before.total), bytes(x.after.total),
    bytes(x.before.rss), bytes(x.after.rss), bytes(x.before.rssAnon), bytes(x.after.rssAnon),
  ])
  const parts = r.runs.map((x) => [
    int(x.days), bytes(x.after.goals.daySets), bytes(x.after.goals.hourSets), `${bytes(x.after.goals.times)} (${int(x.after.goals.timesSessions)})`,
    bytes(x.after.goals.tallies), bytes(x.after.kinds.goals - x.after.goals.daySets - x.after.goals.hourSets - x.after.goals.times - x.after.goals.tallies),
    bytes(x.after.kinds.summaries), bytes(x.after.kinds.counters), bytes(x.after.kinds.filter),
  ])
  const perDay = (g) => [
    ['goal state (task.memory)', g.goals], ['  day sets', g.daySets], ['  hour sets (last 8 days)', g.hourSets], ['  completion times', g.times],
    ['site-day counters', g.counters], ['stored-sessions filter', g.filter], ['heapUsed + arrayBuffers', g.total], ['RSS', g.rss], ['  RssAnon', g.rssAnon],
  ].map(([label, v]) => [label, bytes(v.before), bytes(v.after)])
  const questions = r.runs.map((x) => {
    const q = x.questions
    const c = (t) => `${ms(t.ms, 1)} (${int(t.loaded)})`
    return [
      int(x.days), `${q.windowDays} (${int(q.sessions.answer.conversions)} buys)`, c(q.sessions.cold), ms(q.sessions.warm.ms, 2),
      c(q.overlap.cold), ms(q.overlap.warm.ms, 2), c(q.overlap.storedJoinsCached), c(q.readBack), q.sessions.sameAnswer && q.overlap.sameAnswer ? 'yes' : 'NO',
      `${int(x.settled.loaded)} / ${int(x.settled.evicted)}`,
    ]
  })
  const builds = r.runs.map((x) => `D=${x.days}: ${int(x.build.events)} events in ${ms(x.build.wallMs / 1000, 0)} s (${int(x.build.eventsPerSec)}/s; append+read ${ms(x.build.appendMs / 1000, 0)} s, fold ${ms(x.build.foldMs / 1000, 0)} s, snapshots ${ms(x.build.snapshotMs / 1000, 0)} s); eviction ${ms(x.evictMs, 1)} ms`)
  const lines = [
    `== retention: one site (UTC), 3 goals (pageview /product/*, signup, buy), ${int(u.sessionsPerDay)} sessions a day of 2–3 events, folded by a PartitionTask through the embedded log, snapshots to LevelDB; a child per row (--expose-gc, heapUsed + arrayBuffers after two full GCs)`,
    `hot summaries: at most ${int(u.maxHotSessions)} while folding (idle ${u.hotSessionMs / 1000} s leave), then every one (all written) let go before measuring — the table keeps its slabs, so "summaries" stays at its high-water mark; exact threshold ${int(u.exactThreshold)}; malloc: ${Object.entries(u.mallocEnv).map(([k, v]) => `${k}=${v}`).join(' ') || 'glibc defaults'}`,
    ...builds,
    '',
    'memory before → after evicting settled days (day sets: in memory / in the store only):',
    table([['days', 'sessions', 'conversions', 'sets before', 'sets after', 'goals before', 'goals after', 'heap+AB before', 'heap+AB after', 'RSS before', 'RSS after', 'RssAnon before', 'RssAnon after'], ...memory]),
    '',
    'after eviction, by part (completion times: sessions with several completions a day, counted in brackets):',
    table([['days', 'day sets', 'hour sets', 'completion times', 'counts by value', 'multi-day + rest', 'summaries', 'counters', 'filter'], ...parts]),
  ]
  if (r.growth) {
    lines.push('', `growth per added retained day, ${r.growth.from} → ${r.growth.to} days:`)
    lines.push(table([['', 'before eviction', 'after eviction'], ...perDay(r.growth)]))
    for (const s of r.steps ?? []) {
      lines.push(`  ${s.from} → ${s.to} days: goals ${bytes(s.goals.before)} → ${bytes(s.goals.after)} a day (day sets ${bytes(s.daySets.after)}, hour sets ${bytes(s.hourSets.after)}, times ${bytes(s.times.after)} after), heap+AB ${bytes(s.total.before)} → ${bytes(s.total.after)}, RSS ${bytes(s.rss.before)} → ${bytes(s.rss.after)}`)
    }
  }
  lines.push(
    '',
    'questions on settled days only — window [today − D + 1, today − 2]; ms (sets read back from the store); warm: median of 5; code warmed first on today and yesterday:',
    table([['days', 'window days', 'sessions cold', 'sessions warm', 'overlap cold', 'overlap warm', 'overlap stored, joins kept', 'read back alone', 'answers agree', 'loaded / evicted'], ...questions]),
    'sessions: the 20 latest buyers (limit 20); overlap: signup × buy; before the overlap the days read back were evicted again (two passes),',
    'and once more before "stored, joins kept" (per-day joins are kept under day stamps, which eviction keeps: nothing is read) and before "read back alone"',
    '(the overlap\'s sets of the window loaded from the store with no question, settled.loadRange): cold overlap minus it is about the per-day joins\' walk',
  )
  return lines.join('\n')
}
