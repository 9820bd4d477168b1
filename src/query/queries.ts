import type { Goal, GoalList, GoalRevenue, SessionList, Site, Suggestions } from '../schema/index.js'
import { divideRounded, formatDay, formatUnits, todayOf } from '../goals/index.js'
import { readingSettled, type PartitionState } from '../stream/index.js'
import { toConvertedSession } from './converted-session.js'
import {
  goalsPartial, partitionSessions, sessionsPartial, suggestionsPartial,
  type GoalsPartial, type RevenuePartial, type SessionsPartial, type SuggestionsPartial, type SummaryLookup, type Window,
} from './partials.js'

export type { Window } from './partials.js'

/** The window of docs/api.md §3: today and the days-1 days before it, in the site's time zone. */
export function windowOf(site: Site, days: number, now = Date.now()): Window {
  const to = todayOf(site.timezone, now)
  return { from: to - days + 1, to }
}

/** The body of GET /api/goals from the merged partials of every partition. */
export function goalListBody(site: Site, goals: Goal[], days: number, w: Window, merged: GoalsPartial): GoalList {
  const total = merged.total_sessions
  return {
    site_id: site.site_id,
    days,
    from: formatDay(w.from),
    to: formatDay(w.to),
    timezone: site.timezone,
    total_sessions: total,
    goals: goals.map((g) => {
      const c = merged.conversions[g.id] ?? 0
      return { ...g, conversions: c, conversion_rate: total === 0 ? 0 : c / total, revenue: revenueBody(g, c, merged.revenue?.[g.id]) }
    }),
  }
}

/**
 * A goal's revenue answer (docs/api.md §9.2): null without a currency; else the exact total and
 * the average per conversion, rounded half away from zero, both with four decimals.
 */
export function revenueBody(goal: Pick<Goal, 'currency'>, conversions: number, r: RevenuePartial | undefined): GoalRevenue | null {
  if (goal.currency === undefined) return null
  const units = BigInt(r?.units ?? '0')
  return {
    currency: goal.currency,
    total: formatUnits(units),
    average: formatUnits(divideRounded(units, conversions)),
    events: r?.events ?? 0,
    other_currency_events: r?.other ?? 0,
  }
}

/**
 * A position in the expansion list: the last row's conversion time and session id, and the window
 * of the first page. The window is pinned: a listing that crosses midnight in the site's time zone
 * goes on over the days it started with, instead of skipping or repeating rows of a moved window.
 */
export interface Cursor {
  ts: number
  sid: string
  /** absent in cursors of earlier versions: the window is then the current one */
  window?: Window
}

export function encodeCursor(c: Cursor): string {
  const fields: unknown[] = c.window ? [c.ts, c.sid, c.window.from, c.window.to] : [c.ts, c.sid]
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

const isDay = (v: unknown): v is number => Number.isSafeInteger(v)

export function decodeCursor(text: string): Cursor | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString())
    if (Array.isArray(v) && (v.length === 2 || v.length === 4)) {
      const [ts, sid, from, to] = v as unknown[]
      if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof sid !== 'string') return null
      if (v.length === 2) return { ts, sid }
      if (isDay(from) && isDay(to) && from <= to) return { ts, sid, window: { from, to } }
    }
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
export function sessionListBody(goal: Goal, days: number, limit: number, cursor: Cursor | null, merged: SessionsPartial, window: Window): SessionList {
  const rows = merged.rows
  const after = cursor
    ? rows.filter((r) => r.ts < cursor.ts || (r.ts === cursor.ts && r.summary.session_id > cursor.sid))
    : rows
  after.sort((a, b) => b.ts - a.ts || (a.summary.session_id < b.summary.session_id ? -1 : a.summary.session_id > b.summary.session_id ? 1 : 0))
  const page = after.slice(0, limit)
  const last = page[page.length - 1]
  return {
    goal_id: goal.id,
    days,
    conversions: merged.conversions,
    sessions: page.map((r) => toConvertedSession(r.summary, r.ts)),
    next_cursor: after.length > limit && last ? encodeCursor({ ts: last.ts, sid: last.summary.session_id, window }) : null,
  }
}

/** Paths or event names, most sessions first, ties by value. */
export function suggestionsBody(merged: SuggestionsPartial, limit: number): Suggestions {
  const list = merged.values.map(([value, sessions]) => ({ value, sessions }))
  list.sort((a, b) => b.sessions - a.sessions || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
  return { suggestions: list.slice(0, limit) }
}

/** The first day still inside the retention, in the site's time zone. */
export const retainedFrom = (site: Site, retentionDays: number, now = Date.now()): number =>
  todayOf(site.timezone, now) - retentionDays + 1

/** GET /api/goals over partitions held in this process (tests, benches, one node). */
export function goalList(parts: PartitionState[], site: Site, goals: Goal[], days: number, now = Date.now()): GoalList {
  const w = windowOf(site, days, now)
  return goalListBody(site, goals, days, w, goalsPartial(parts, { kind: 'goals', site_id: site.site_id, window: w, goal_ids: goals.map((g) => g.id) }))
}

/** The sessions expansion over partitions held in this process (tests, one node). */
export async function goalSessions(
  parts: PartitionState[], lookup: SummaryLookup, goal: Goal, site: Site,
  days: number, limit: number, cursor: Cursor | null, now = Date.now(),
): Promise<SessionList> {
  const w = cursor?.window ?? windowOf(site, days, now)
  const q = { kind: 'sessions' as const, goal_id: goal.id, window: w, limit, cursor_ts: cursor?.ts ?? null }
  // settled days held in the store only are read back (stream/settled-days.ts)
  const merged = await readingSettled(parts, () => sessionsPartial(parts, lookup, q))
  return sessionListBody(goal, days, limit, cursor, merged, w)
}

/** Suggestions over partitions held in this process (tests, one node). */
export function suggestions(
  parts: PartitionState[], site: Site, kind: 'path' | 'event', prefix: string, limit: number, retentionDays: number, now = Date.now(),
): Suggestions {
  const merged = suggestionsPartial(parts, { kind: 'suggestions', site_id: site.site_id, of: kind, prefix, min_day: retainedFrom(site, retentionDays, now) })
  return suggestionsBody(merged, limit)
}

/** Distinct sessions of a site over a window, across partitions held in this process. */
export const totalSessions = (parts: PartitionState[], siteId: string, w: Window): number =>
  parts.reduce((n, state) => n + partitionSessions(state, siteId, w), 0)

/** Conversions of a goal over a window, across partitions held in this process. */
export const conversions = (parts: PartitionState[], goalId: string, w: Window): number =>
  parts.reduce((n, state) => n + (state.goals.get(goalId)?.conversions(w.from, w.to) ?? 0), 0)
