import type { LoggedEvent } from '../schema/index.js'
import type { ConvertedSession, SessionSummary } from '../schema/index.js'
import { normalizePath } from '../goals/index.js'
import { describeClient } from './device.js'

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
