import { parsePattern } from '../goals/index.js'
import type { Goal } from '../schema/index.js'

type GoalMatch = Pick<Goal, 'site_id' | 'goal_type' | 'match_event' | 'match_path'>

/**
 * What makes two goals the same goal (docs/api.md §3): site, type and match — the event name, or the
 * path pattern as stored (normalized, so `/pricing/` and `/pricing` are one goal). Site ids hold
 * no `|`, so the match, last, may.
 */
export function goalIdentity(g: GoalMatch): string {
  return `${g.site_id}|${g.goal_type}|${g.goal_type === 'custom_event' ? g.match_event : g.match_path}`
}

/** Why a stored goal cannot match events, or undefined when it can. */
export function checkStoredGoal(g: GoalMatch): string | undefined {
  if (g.goal_type === 'custom_event') return typeof g.match_event === 'string' && g.match_event !== '' ? undefined : 'no match_event'
  if (g.goal_type !== 'pageview') return `an unknown goal_type ${JSON.stringify(g.goal_type)}`
  if (typeof g.match_path !== 'string') return 'no match_path'
  const parsed = parsePattern(g.match_path)
  return parsed.ok ? undefined : `a match_path that does not parse (${parsed.error})`
}
