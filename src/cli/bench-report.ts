import type { BenchPlan } from './bench-plan.js'
import type { BenchResult } from './bench-run.js'
import { goalLabel } from './bench-goals.js'
import { int, ms, table } from './text-table.js'

const listed = (counts: Record<string, number>, none: string) => {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1])
  return entries.length ? entries.map(([k, n]) => `${k} × ${int(n)}`).join(', ') : none
}

export function describeTarget(plan: BenchPlan): string {
  const t = plan.target
  const where = t.kind === 'http'
    ? `${t.batch > 1 ? `POST /api/events (${t.batch} events each)` : 'POST /api/event'} → ${t.url.origin}`
    : `topic ${t.prefix}.events on ${t.brokers.join(',')}${t.batch > 1 ? ` (${t.batch} events per send)` : ''}`
  const s = plan.shape
  const sessions = s.eventsPerSession === 1 ? 'a new session per event' : `${s.eventsPerSession} events per session, ${int(s.openSessions)} open at a time`
  return `${where}, ${plan.connections} ${t.kind === 'http' ? 'connections' : 'concurrent sends'}, ${plan.durationMs / 1000} s; ${s.siteIds.length} site(s), ${s.goals.length} goal(s), ${sessions}${s.sessionPool ? ` (pool of ${int(s.sessionPool)})` : ''}`
}

/** The report `goalpost bench` prints: throughput, latency, failures, and whether the counts agree. */
export function benchReport(plan: BenchPlan, r: BenchResult): string {
  const l = r.load
  const lines = [
    `goalpost bench: ${describeTarget(plan)}`,
    '',
    table([
      ['requests', 'acknowledged', 'events/s', 'requests/s', 'p50 ms', 'p99 ms', 'max ms'],
      [int(l.requests), int(l.ok), int(l.eventsPerSec), int(l.requestsPerSec), ms(l.latencyMs.p50), ms(l.latencyMs.p99), ms(l.latencyMs.max)],
    ]),
    '',
    `answers by status: ${listed(l.byStatus, 'none')}`,
    `requests without an answer: ${listed(l.errors, 'none')}`,
  ]
  const v = r.verification
  if ('skipped' in v) {
    lines.push(`counts not checked: ${v.skipped}`)
    return lines.join('\n')
  }
  lines.push('', `counted by the service (GET /api/goals, after ${int(v.waitedMs)} ms):`)
  const rows: (string | number)[][] = [['site', 'what', 'expected', 'counted', '']]
  for (const c of v.checks) {
    rows.push([c.siteId, 'sessions', int(c.expected.sessions), int(c.counted.sessions), c.sessionsOk ? 'ok' : 'MISMATCH'])
    plan.shape.goals.forEach((g, i) => {
      const got = c.counted.conversions[i]
      rows.push(['', goalLabel(g), int(c.expected.conversions[i]), got === null || got === undefined ? 'no goal' : int(got), got === c.expected.conversions[i] ? 'ok' : 'MISMATCH'])
    })
  }
  lines.push(table(rows))
  lines.push(v.ok
    ? 'the service counted every acknowledged event (sessions within the sketch\'s ±2.4 % where estimated, conversions exact)'
    : `MISMATCH: ${int(v.waitedMs)} ms after the run the service still reports other counts than it acknowledged`)
  return lines.join('\n')
}
