import type { PropertyCondition } from '../schema/index.js'
import { describeCondition } from './property-conditions.js'

/** Longest goal name (docs/api.md §3). */
export const MAX_GOAL_NAME_LENGTH = 256

export type GoalType = 'pageview' | 'custom_event'

/**
 * The name a goal is shown under: the given one trimmed, or when blank one generated from the
 * match (docs/api.md §3), cut to 256 characters (never inside a surrogate pair).
 *
 * @example
 * goalName('custom_event', 'add_to_cart') // 'Add to cart'
 * goalName('pageview', '/pricing')        // 'Visit /pricing'
 * goalName('custom_event', 'signup', null, [{ key: 'plan', op: 'is', values: ['pro', 'team'] }])
 *                                          // 'Signup (plan is pro or team)'
 */
export function goalName(goalType: GoalType, match: string, name?: string | null, conditions?: readonly PropertyCondition[]): string {
  const given = name?.trim() ?? ''
  if (given !== '') return cut(given)
  if (goalType === 'pageview') return cut('Visit ' + match)
  const label = eventLabel(match) || match
  // conditions tell apart goals on one event name; several are joined by commas (all must hold)
  return cut(conditions?.length ? `${label} (${conditions.map(describeCondition).join(', ')})` : label)
}

function eventLabel(eventName: string): string {
  const words = eventName.replace(/[_.-]/g, ' ').replace(/ {2,}/g, ' ').trim()
  if (words === '') return ''
  const first = String.fromCodePoint(words.codePointAt(0)!)
  return first.toUpperCase() + words.slice(first.length)
}

function cut(s: string): string {
  if (s.length <= MAX_GOAL_NAME_LENGTH) return s
  const end = isHighSurrogate(s.charCodeAt(MAX_GOAL_NAME_LENGTH - 1)) ? MAX_GOAL_NAME_LENGTH - 1 : MAX_GOAL_NAME_LENGTH
  return s.slice(0, end)
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}
