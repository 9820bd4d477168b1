import type { LoggedEvent } from '../schema/index.js'
import { normalizePath } from '../goals/index.js'

/** suggestion values a session remembers having counted, at most */
export const MAX_SEEN = 32

/** The page path of an event for goals and summaries, or null when it is not a pageview. */
export function pageOf(e: LoggedEvent): string | null {
  return e.type === 'pageview' && e.path !== undefined ? normalizePath(e.path) : null
}
