import { canonicalConditions, checkConditions, parsePattern } from '../goals/index.js'
import type { Goal } from '../schema/index.js'

type GoalMatch = Pick<Goal, 'site_id' | 'goal_type' | 'match_event' | 'match_path' | 'match_properties' | 'currency'>

/**
 * What makes two goals the same goal (docs/api.md §3): site, type and match — the event name, or the
 * path pattern as stored (normalized, so `/pricing/` and `/pricing` are one goal). Site ids hold
 * no `|`, so the match, last, may.
 *
 * An event goal with property conditions or a currency (docs/api.md §9) adds them, in canonical
 * order, under a type word no goal has (`custom_event+`, the rest as JSON), so it can meet neither
 * a plain goal (whose identity, kept in the config log's claims, stays what it always was) nor
 * another goal whose event name happens to spell the suffix.
 */
export function goalIdentity(g: GoalMatch): string {
  if (g.goal_type === 'custom_event' && (g.match_properties?.length || g.currency)) {
    const conditions = g.match_properties?.length ? canonicalConditions(g.match_properties) : '[]'
    return `${g.site_id}|custom_event+|${JSON.stringify([g.match_event, g.currency ?? null])}${conditions}`
  }
  return `${g.site_id}|${g.goal_type}|${g.goal_type === 'custom_event' ? g.match_event : g.match_path}`
}

/** Why a stored goal cannot match events, or undefined when it can. */
export function checkStoredGoal(g: GoalMatch): string | undefined {
  if (g.goal_type === 'custom_event') {
    if (typeof g.match_event !== 'string' || g.match_event === '') return 'no match_event'
    const bad = g.match_properties ? checkConditions(g.match_properties) : undefined
    return bad && `property conditions that do not hold together (${bad})`
  }
  if (g.goal_type !== 'pageview') return `an unknown goal_type ${JSON.stringify(g.goal_type)}`
  if (typeof g.match_path !== 'string') return 'no match_path'
  const parsed = parsePattern(g.match_path)
  return parsed.ok ? undefined : `a match_path that does not parse (${parsed.error})`
}
