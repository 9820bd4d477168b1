import type { Goal, GoalList, SessionList, Site, Suggestions } from '../schema/api.js'
import { SessionCounter } from '../sketch/index.js'
import { formatDay, todayOf } from '../goals/index.js'
import type { PartitionState, SiteState } from './partition-state.js'
import { hashKey } from './partition-state.js'
import { toConvertedSession, type SessionSummary } from './session-summary.js'

export interface Window {
  from: number
  to: number
}

/** The window of API.md §3: today and the days-1 days before it, in the site's time zone. */
export function windowOf(site: Site, days: number, now = Date.now()): Window {
  const to = todayOf(site.timezone, now)
  return { from: to - days + 1, to }
}

/**
 * Distinct sessions of a site over a window: a union of per-day, per-partition counters. Exact
 * while every counter is exact and the union stays under the threshold, else HyperLogLog.
 * Sessions never span partitions, so partitions add up; days inside a partition union. The union
 * of the window's earlier days is cached per partition until one of them changes, so a dashboard
 * polling while events arrive pays for one day, not the whole window.
 */
export function totalSessions(parts: PartitionState[], siteId: string, w: Window): number {
  let total = 0
  for (const state of parts) {
    const site = state.sites.get(siteId)
    if (!site) continue
    const last = site.days.get(w.to)
    if (w.from === w.to) {
      total += last?.count() ?? 0
      continue
    }
    const past = pastUnion(site, w, state.exactThreshold)
    total += last ? SessionCounter.union([past, last]) : past.count()
  }
  return total
}

/** dashboards ask a handful of windows (7, 30, 90 days…); more than this and the oldest goes */
const PAST_WINDOWS = 8

function pastUnion(site: SiteState, w: Window, threshold: number): SessionCounter {
  const key = `${w.from}:${w.to}`
  const cached = site.past.get(key)
  if (cached) {
    let fresh = true
    for (let day = w.from; day < w.to && fresh; day++) fresh = (site.changedAt.get(day) ?? 0) <= cached.at
    if (fresh) return cached.union
  }
  const union = new SessionCounter(threshold)
  for (const [day, c] of site.days) if (day >= w.from && day < w.to) union.mergeFrom(c)
  site.past.delete(key)
  if (site.past.size >= PAST_WINDOWS) site.past.delete(site.past.keys().next().value!)
  site.past.set(key, { at: site.changes, union })
  return union
}

export function conversions(parts: PartitionState[], goalId: string, w: Window): number {
  let n = 0
  for (const state of parts) n += state.goals.get(goalId)?.conversions(w.from, w.to) ?? 0
  return n
}

/** The body of GET /api/goals (API.md §3). Cost grows with partitions × days × goals only. */
export function goalList(parts: PartitionState[], site: Site, goals: Goal[], days: number, now = Date.now()): GoalList {
  const w = windowOf(site, days, now)
  const total = totalSessions(parts, site.site_id, w)
  return {
    site_id: site.site_id,
    days,
    from: formatDay(w.from),
    to: formatDay(w.to),
    timezone: site.timezone,
    total_sessions: total,
    goals: goals.map((g) => {
      const c = conversions(parts, g.id, w)
      return { ...g, conversions: c, conversion_rate: total === 0 ? 0 : c / total }
    }),
  }
}

export type SummaryLookup = (partition: number, hks: string[]) => Promise<(SessionSummary | undefined)[]>

/** A position in the expansion list: the last row's conversion time and session id. */
interface Cursor {
  ts: number
  sid: string
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.ts, c.sid])).toString('base64url')
}

export function decodeCursor(text: string): Cursor | null {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString())
    if (Array.isArray(v) && v.length === 2 && Number.isFinite(v[0]) && typeof v[1] === 'string') return { ts: v[0], sid: v[1] }
  } catch {
    // fall through: not a cursor of ours
  }
  return null
}

/**
 * The converted sessions of a goal, latest first conversion first, ties by session id, paged by a
 * (time, session id) cursor: rows that arrive later sort before the cursor or after it, never
 * shifting a page already read.
 */
export async function goalSessions(
  parts: PartitionState[], lookup: SummaryLookup, goal: Goal, site: Site,
  days: number, limit: number, cursor: Cursor | null, now = Date.now(),
): Promise<SessionList> {
  const w = windowOf(site, days, now)
  const rows: { ts: number; summary: SessionSummary }[] = []
  for (const state of parts) {
    const g = state.goals.get(goal.id)
    if (!g) continue
    const found = g.candidates(w.from, w.to, limit + 1, cursor?.ts)
    const summaries = await lookup(state.partition, found.map((c) => hashKey(c.hi, c.lo)))
    found.forEach((c, i) => {
      const summary = summaries[i]
      if (summary) rows.push({ ts: c.ts, summary })
    })
  }
  const after = cursor
    ? rows.filter((r) => r.ts < cursor.ts || (r.ts === cursor.ts && r.summary.session_id > cursor.sid))
    : rows
  after.sort((a, b) => b.ts - a.ts || (a.summary.session_id < b.summary.session_id ? -1 : a.summary.session_id > b.summary.session_id ? 1 : 0))
  const page = after.slice(0, limit)
  const last = page[page.length - 1]
  return {
    goal_id: goal.id,
    days,
    conversions: conversions(parts, goal.id, w),
    sessions: page.map((r) => toConvertedSession(r.summary, r.ts)),
    next_cursor: after.length > limit && last ? encodeCursor({ ts: last.ts, sid: last.summary.session_id }) : null,
  }
}

/** Paths or event names seen on a site in the retained window, most sessions first. */
export function suggestions(
  parts: PartitionState[], site: Site, kind: 'path' | 'event', prefix: string, limit: number, retentionDays: number, now = Date.now(),
): Suggestions {
  const minDay = todayOf(site.timezone, now) - retentionDays + 1
  const merged = new Map<string, number>()
  for (const state of parts) {
    const s = state.sites.get(site.site_id)
    if (!s) continue
    const top = (kind === 'path' ? s.paths : s.events).top(Infinity, { prefix, minDay })
    for (const { value, count } of top) merged.set(value, (merged.get(value) ?? 0) + count)
  }
  const list = [...merged].map(([value, sessions]) => ({ value, sessions }))
  list.sort((a, b) => b.sessions - a.sessions || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
  return { suggestions: list.slice(0, limit) }
}
