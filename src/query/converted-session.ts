import type { ConvertedSession, SessionSummary } from '../schema/index.js'
import { describeClient } from '../agent/index.js'

/** A session summary as the sessions list shows it: the client described, times as ISO strings. */
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
