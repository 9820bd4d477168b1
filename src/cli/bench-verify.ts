import { apiCall, expectStatus } from './api-client.js'
import type { BenchGoal } from './bench-goals.js'
import type { SiteExpectation } from './tally.js'

/** What GET /api/goals says of one site: its sessions and each bench goal's conversions. */
export interface SiteCounts {
  siteId: string
  sessions: number
  /** in the bench's goal order; null when the site has no such goal */
  conversions: (number | null)[]
}

export interface CountCheck {
  siteId: string
  expected: { sessions: number; conversions: number[] }
  /** what the service added during the run (its answer now minus before) */
  counted: { sessions: number; conversions: (number | null)[] }
  sessionsOk: boolean
  conversionsOk: boolean
}

export interface Verification {
  ok: boolean
  checks: CountCheck[]
  /** how long after the run the service took to count everything (or the time waited in vain) */
  waitedMs: number
}

interface GoalsAnswer {
  total_sessions: number
  goals: { goal_type: string; match_path?: string; match_event?: string; conversions: number }[]
}

/** Today and yesterday: a run across midnight still falls inside the window. */
const WINDOW_DAYS = 2
/** total_sessions is a HyperLogLog estimate on large sites: 3 standard errors of precision 14 */
export const SKETCH_TOLERANCE = 3 * 0.0081

export const sessionsAgree = (got: number, expected: number): boolean => Math.abs(got - expected) <= Math.ceil(expected * SKETCH_TOLERANCE)

export async function readCounts(base: URL, token: string, siteIds: readonly string[], goals: readonly BenchGoal[]): Promise<SiteCounts[]> {
  const out: SiteCounts[] = []
  for (const siteId of siteIds) {
    const r = await apiCall(base, 'GET', `/api/goals?site_id=${encodeURIComponent(siteId)}&days=${WINDOW_DAYS}`, { token })
    expectStatus(r, [200], `GET /api/goals?site_id=${siteId}`)
    const answer = r.body as GoalsAnswer
    out.push({
      siteId,
      sessions: answer.total_sessions,
      conversions: goals.map((g) => {
        const b = g.body
        const found = answer.goals.find((x) => x.goal_type === b.goal_type && ('match_path' in b ? x.match_path === b.match_path : x.match_event === b.match_event))
        return found ? found.conversions : null
      }),
    })
  }
  return out
}

export function compareCounts(expected: readonly SiteExpectation[], before: readonly SiteCounts[], now: readonly SiteCounts[]): CountCheck[] {
  return expected.map((e, i) => {
    const b = before[i]
    const n = now[i]
    const counted = {
      sessions: n.sessions - b.sessions,
      conversions: n.conversions.map((c, g) => (c === null || b.conversions[g] === null ? null : c - b.conversions[g])),
    }
    return {
      siteId: e.siteId,
      expected: { sessions: e.sessions, conversions: e.conversions },
      counted,
      sessionsOk: sessionsAgree(counted.sessions, e.sessions),
      conversionsOk: counted.conversions.every((c, g) => c === e.conversions[g]),
    }
  })
}

/**
 * Polls GET /api/goals until the service reports what it acknowledged, or `timeoutMs` passes
 * (the stream processor may still be folding a backlog when the load stops).
 */
export async function waitCounted(
  base: URL, token: string, goals: readonly BenchGoal[], expected: readonly SiteExpectation[], before: readonly SiteCounts[],
  timeoutMs: number,
): Promise<Verification> {
  const started = Date.now()
  const siteIds = expected.map((e) => e.siteId)
  for (;;) {
    const checks = compareCounts(expected, before, await readCounts(base, token, siteIds, goals))
    const ok = checks.every((c) => c.sessionsOk && c.conversionsOk)
    const waitedMs = Date.now() - started
    if (ok || waitedMs >= timeoutMs) return { ok, checks, waitedMs }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}
