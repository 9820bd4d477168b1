import { goalName, parsePattern } from '../goals/browser.js'
import type { PropertyCondition } from '../schema/index.js'

/** One property condition as typed: the values comma-separated. */
export interface ConditionDraft {
  key: string
  op: PropertyCondition['op']
  values: string
}

/** The create form's fields as typed. */
export interface GoalDraft {
  goalType: 'pageview' | 'custom_event'
  match: string
  name: string
  /** event goals only */
  conditions?: ConditionDraft[]
  /** event goals only */
  currency?: string
}

/**
 * The conditions as the API takes them: rows without a key are left out (an empty row is how the
 * form offers one more), values split at commas and trimmed; `exists` takes none.
 */
export function conditionsOf(drafts: readonly ConditionDraft[] = []): PropertyCondition[] {
  return drafts
    .filter((c) => c.key.trim() !== '')
    .map((c) => {
      const key = c.key.trim()
      if (c.op === 'exists') return { key, op: c.op }
      return { key, op: c.op, values: c.values.split(',').map((v) => v.trim()).filter((v) => v !== '') }
    })
}

/**
 * The name the server will give a goal whose Name is left blank, for the field's placeholder;
 * a pattern is named after its normalized form (`/pricing/` → `Visit /pricing`), as the server does.
 */
export function generatedName(draft: Pick<GoalDraft, 'goalType' | 'match' | 'conditions'>): string {
  const match = draft.match.trim()
  if (match === '') return draft.goalType === 'pageview' ? 'Generated from the path pattern' : 'Generated from the event name'
  if (draft.goalType === 'custom_event') return goalName('custom_event', match, null, conditionsOf(draft.conditions))
  const parsed = parsePattern(match)
  return goalName('pageview', parsed.ok ? parsed.pattern : match)
}

/** The body of `POST /api/goals`; the server checks it and names any bad field. */
export function createBody(siteId: string, draft: GoalDraft): Record<string, unknown> {
  const body: Record<string, unknown> = { site_id: siteId, goal_type: draft.goalType }
  if (draft.goalType === 'pageview') body.match_path = draft.match.trim()
  else {
    body.match_event = draft.match.trim()
    const conditions = conditionsOf(draft.conditions)
    if (conditions.length) body.match_properties = conditions
    const currency = draft.currency?.trim().toUpperCase() ?? ''
    if (currency !== '') body.currency = currency
  }
  if (draft.name.trim() !== '') body.name = draft.name.trim()
  return body
}
