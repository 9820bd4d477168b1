import type { LoggedEvent } from '../schema/event.js'
import type { ConvertedSession } from '../schema/api.js'
import { normalizePath } from '../goals/index.js'
import { describeClient } from './device.js'

/**
 * What the processor remembers of one analytics session. Every field is a join of the session's
 * events (min or max by time, first-seen by time), so folding the same event twice, or the events
 * in any order, gives the same summary: replays and backfills can never distort it.
 */
export interface SessionSummary {
  site_id: string
  session_id: string
  visitor_id: string | null
  user_id: string | null
  /** ms of the earliest / latest event */
  first: number
  last: number
  entry_page: string | null
  entry_at: number
  exit_page: string | null
  exit_at: number
  referrer: string | null
  referrer_at: number
  /** the earliest event's client facts win */
  user_agent: string | null
  screen_width: number | null
  client_at: number
  /** suggestion values this session already counted (bounded), so a value counts once per session */
  seen: string[]
}

const MAX_SEEN = 32

export function newSummary(e: LoggedEvent): SessionSummary {
  return {
    site_id: e.site_id,
    session_id: e.session_id,
    visitor_id: null,
    user_id: null,
    first: e.ts,
    last: e.ts,
    entry_page: null,
    entry_at: Infinity,
    exit_page: null,
    exit_at: -Infinity,
    referrer: null,
    referrer_at: Infinity,
    user_agent: null,
    screen_width: null,
    client_at: Infinity,
    seen: [],
  }
}

/**
 * Folds one event into a summary in place; returns true iff anything changed.
 * `page` is the event's normalized path when it is a pageview, else null.
 */
export function foldSummary(s: SessionSummary, e: LoggedEvent, page: string | null): boolean {
  let changed = false
  const ts = e.ts
  if (ts < s.first) (s.first = ts), (changed = true)
  if (ts > s.last) (s.last = ts), (changed = true)
  if (page !== null) {
    // ties by value keep the result independent of arrival order
    if (ts < s.entry_at || (ts === s.entry_at && s.entry_page !== null && page < s.entry_page)) {
      s.entry_at = ts
      s.entry_page = page
      changed = true
    }
    if (ts > s.exit_at || (ts === s.exit_at && s.exit_page !== null && page > s.exit_page)) {
      s.exit_at = ts
      s.exit_page = page
      changed = true
    }
  }
  if (e.referrer && (ts < s.referrer_at || (ts === s.referrer_at && s.referrer !== null && e.referrer < s.referrer))) {
    s.referrer_at = ts
    s.referrer = e.referrer
    changed = true
  }
  if ((e.user_agent || e.screen?.width !== undefined) && ts < s.client_at) {
    s.client_at = ts
    s.user_agent = e.user_agent ?? null
    s.screen_width = e.screen?.width ?? null
    changed = true
  }
  // identities: the latest one known wins, like the browser client's "later events carry user_id"
  if (e.visitor_id && s.visitor_id !== e.visitor_id && (s.visitor_id === null || ts >= s.last)) {
    s.visitor_id = e.visitor_id
    changed = true
  }
  if (e.user_id && s.user_id !== e.user_id && (s.user_id === null || ts >= s.last)) {
    s.user_id = e.user_id
    changed = true
  }
  return changed
}

/** Marks a suggestion value as counted for this session; false when it already was (or the list is full). */
export function firstSight(s: SessionSummary, value: string): boolean {
  if (s.seen.includes(value) || s.seen.length >= MAX_SEEN) return false
  s.seen.push(value)
  return true
}

/** The page path of an event for goals and summaries, or null when it is not a pageview. */
export function pageOf(e: LoggedEvent): string | null {
  return e.type === 'pageview' && e.path !== undefined ? normalizePath(e.path) : null
}

export function toConvertedSession(s: SessionSummary, convertedAt: number): ConvertedSession {
  const client = describeClient(s.user_agent ?? undefined, s.screen_width ?? undefined)
  return {
    session_id: s.session_id,
    visitor_id: s.visitor_id,
    user_id: s.user_id,
    entry_page: s.entry_page,
    exit_page: s.exit_page,
    referrer: s.referrer,
    device: client.device,
    browser: client.browser,
    os: client.os,
    duration: s.last - s.first,
    started_at: new Date(s.first).toISOString(),
    timestamp: new Date(convertedAt).toISOString(),
  }
}
