/**
 * One goal's report over time (a point per day, or per hour of up to seven days): each owner adds
 * its partitions' per-point counts, and the asked node sums them. A point's sessions and
 * conversions are distinct within the point; sessions never span partitions, so sums are exact.
 */
import type { Goal, GoalReport, PartialQuery, Site } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { dayStart, formatDay, hourKey, hoursOf, localIso } from '../goals/index.js'
import { addRevenue, partitionSessions, type RevenuePartial } from './partials.js'
import { revenueBody } from './queries.js'
import type { Window } from './partials.js'

type ReportQuery = Extract<PartialQuery, { kind: 'report' }>
export type Interval = ReportQuery['interval']

export interface ReportPartial {
  total_sessions: number
  conversions: number
  /** per point of the query, in its order */
  sessions: number[]
  converted: number[]
  /** a goal with revenue in these partitions only */
  revenue?: RevenuePartial
}

const HOUR_MS = 3_600_000

/** The series' points: its days, or every hour of its days (`hourKey`s), each with its local start. */
export function reportPoints(w: Window, interval: Interval, timezone: string): { points: number[]; starts: number[] } {
  const points: number[] = []
  const starts: number[] = []
  for (let day = w.from; day <= w.to; day++) {
    const start = dayStart(day, timezone)
    if (interval === 'day') {
      points.push(day)
      starts.push(start)
      continue
    }
    const hours = hoursOf(day, timezone)
    for (let h = 0; h < hours; h++) {
      points.push(hourKey(day, h))
      starts.push(start + h * HOUR_MS)
    }
  }
  return { points, starts }
}

export function reportPartial(parts: Iterable<PartitionState>, q: ReportQuery): ReportPartial {
  const n = q.points.length
  const out: ReportPartial = { total_sessions: 0, conversions: 0, sessions: new Array<number>(n).fill(0), converted: new Array<number>(n).fill(0) }
  for (const state of parts) {
    out.total_sessions += partitionSessions(state, q.site_id, q.window)
    const goal = state.goals.get(q.goal_id)
    out.conversions += goal?.conversions(q.window.from, q.window.to) ?? 0
    const revenue = state.revenue.get(q.goal_id)?.totals(q.window.from, q.window.to)
    if (revenue) out.revenue = addRevenue(out.revenue, { units: String(revenue.total), events: revenue.events, other: revenue.other })
    const site = state.sites.get(q.site_id)
    const counters = q.interval === 'day' ? site?.days : site?.hours
    for (let i = 0; i < n; i++) {
      const point = q.points[i]
      out.sessions[i] += counters?.get(point)?.count() ?? 0
      out.converted[i] += (q.interval === 'day' ? goal?.daySize(point) : goal?.hourConversions(point)) ?? 0
    }
  }
  return out
}

export function mergeReports(partials: ReportPartial[], points: number): ReportPartial {
  const out: ReportPartial = { total_sessions: 0, conversions: 0, sessions: new Array<number>(points).fill(0), converted: new Array<number>(points).fill(0) }
  for (const p of partials) {
    out.total_sessions += p.total_sessions
    out.conversions += p.conversions
    if (p.revenue) out.revenue = addRevenue(out.revenue, p.revenue)
    for (let i = 0; i < points; i++) {
      out.sessions[i] += p.sessions[i] ?? 0
      out.converted[i] += p.converted[i] ?? 0
    }
  }
  return out
}

const rate = (n: number, of: number): number => (of === 0 ? 0 : n / of)

export function reportBody(goal: Goal, site: Site, days: number, w: Window, starts: number[], merged: ReportPartial): GoalReport {
  return {
    goal,
    days,
    from: formatDay(w.from),
    to: formatDay(w.to),
    timezone: site.timezone,
    total_sessions: merged.total_sessions,
    conversions: merged.conversions,
    conversion_rate: rate(merged.conversions, merged.total_sessions),
    revenue: revenueBody(goal, merged.conversions, merged.revenue),
    series: starts.map((start, i) => ({
      start: localIso(start, site.timezone),
      sessions: merged.sessions[i],
      conversions: merged.converted[i],
      conversion_rate: rate(merged.converted[i], merged.sessions[i]),
    })),
  }
}
