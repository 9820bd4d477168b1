import { goalName, parsePattern } from '../goals/browser.js'

/** The create form's fields as typed. */
export interface GoalDraft {
  goalType: 'pageview' | 'custom_event'
  match: string
  name: string
}

/**
 * The name the server will give a goal whose Name is left blank, for the field's placeholder;
 * a pattern is named after its normalized form (`/pricing/` → `Visit /pricing`), as the server does.
 */
export function generatedName(draft: Pick<GoalDraft, 'goalType' | 'match'>): string {
  const match = draft.match.trim()
  if (match === '') return draft.goalType === 'pageview' ? 'Generated from the path pattern' : 'Generated from the event name'
  if (draft.goalType === 'custom_event') return goalName('custom_event', match)
  const parsed = parsePattern(match)
  return goalName('pageview', parsed.ok ? parsed.pattern : match)
}

/** The body of `POST /api/goals`; the server checks it and names any bad field. */
export function createBody(siteId: string, draft: GoalDraft): Record<string, string> {
  const body: Record<string, string> = { site_id: siteId, goal_type: draft.goalType }
  if (draft.goalType === 'pageview') body.match_path = draft.match.trim()
  else body.match_event = draft.match.trim()
  if (draft.name.trim() !== '') body.name = draft.name.trim()
  return body
}
