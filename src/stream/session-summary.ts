import type { LoggedEvent } from '../schema/event.js'
import type { ConvertedSession } from '../schema/api.js'
import { normalizePath } from '../goals/index.js'
import { describeClient } from './device.js'

/**
 * What the processor remembers of one analytics session. Every field is a join of the session's
 * events (min or max by time, first-seen by time), so folding the same event twice, or the events
 * in any order, gives the same summary: replays and backfills can never distort it. Hot sessions
 * are folded in a SessionTable (session-table.ts); this is the form they take outside it.
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

/** suggestion values a session remembers having counted, at most */
export const MAX_SEEN = 32

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
