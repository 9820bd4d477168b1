import type { Goal } from '../schema/index.js'
import { parsePattern } from '../goals/index.js'

interface PageGoal {
  id: string
  match: (path: string) => boolean
}

/** The goals of one site, compiled once per goal change so that matching an event costs no parsing. */
export interface SiteGoals {
  pages: PageGoal[]
  events: Map<string, string[]>
}

/**
 * Which goals an event completes. Page goals match pageviews by path pattern; event goals match
 * custom events by exact name (docs/api.md §3, §4).
 */
export class GoalIndex {
  readonly #sites = new Map<string, SiteGoals>()

  add(goal: Goal): void {
    let site = this.#sites.get(goal.site_id)
    if (!site) this.#sites.set(goal.site_id, (site = { pages: [], events: new Map() }))
    this.remove(goal.id, goal.site_id)
    if (goal.goal_type === 'pageview' && goal.match_path !== undefined) {
      const parsed = parsePattern(goal.match_path)
      if (parsed.ok) site.pages.push({ id: goal.id, match: parsed.match })
    } else if (goal.goal_type === 'custom_event' && goal.match_event !== undefined) {
      const ids = site.events.get(goal.match_event)
      if (ids) ids.push(goal.id)
      else site.events.set(goal.match_event, [goal.id])
    }
  }

  remove(goalId: string, siteId: string): void {
    const site = this.#sites.get(siteId)
    if (!site) return
    site.pages = site.pages.filter((p) => p.id !== goalId)
    for (const [name, ids] of site.events) {
      const rest = ids.filter((id) => id !== goalId)
      if (rest.length) site.events.set(name, rest)
      else site.events.delete(name)
    }
  }

  /** ids of the goals this event completes, appended to `out` */
  matches(siteId: string, type: string, page: string | null, eventName: string | undefined, out: string[]): void {
    const site = this.#sites.get(siteId)
    if (!site) return
    if (type === 'pageview' && page !== null) {
      for (const p of site.pages) if (p.match(page)) out.push(p.id)
    } else if (type === 'custom_event' && eventName !== undefined) {
      const ids = site.events.get(eventName)
      if (ids) for (const id of ids) out.push(id)
    }
  }
}
