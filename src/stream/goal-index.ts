import type { Goal, LoggedEvent } from '../schema/index.js'
import { compileConditions, parsePattern, type PropertiesTest } from '../goals/index.js'

interface PageGoal {
  id: string
  match: (path: string) => boolean
}

interface ConditionalGoal {
  id: string
  test: PropertiesTest
}

/**
 * The event goals of one event name: those without property conditions as plain ids (matching
 * costs what it always did), those with conditions compiled once, when the goal is added.
 */
interface EventGoals {
  ids: string[]
  conditional: ConditionalGoal[]
}

/** The goals of one site, compiled once per goal change so that matching an event costs no parsing. */
export interface SiteGoals {
  /** every goal of the site */
  ids: string[]
  pages: PageGoal[]
  events: Map<string, EventGoals>
  /** the currency of each goal that sums revenue; empty for most sites, so most events skip revenue */
  currencies: Map<string, string>
}

/** What matching reads of an event. */
export type MatchedEvent = Pick<LoggedEvent, 'type' | 'event_name' | 'properties'>

/** `payment` events complete event goals as if named "payment" (docs/api.md §9.2). */
const PAYMENT = 'payment'

/**
 * Which goals an event completes. Page goals match pageviews by path pattern; event goals match
 * custom events (and payments) by exact name and their property conditions (docs/api.md §3, §4, §9).
 */
export class GoalIndex {
  readonly #sites = new Map<string, SiteGoals>()

  add(goal: Goal): void {
    let site = this.#sites.get(goal.site_id)
    if (!site) this.#sites.set(goal.site_id, (site = { ids: [], pages: [], events: new Map(), currencies: new Map() }))
    this.remove(goal.id, goal.site_id)
    site.ids.push(goal.id)
    if (goal.goal_type === 'pageview' && goal.match_path !== undefined) {
      const parsed = parsePattern(goal.match_path)
      if (parsed.ok) site.pages.push({ id: goal.id, match: parsed.match })
    } else if (goal.goal_type === 'custom_event' && goal.match_event !== undefined) {
      let goals = site.events.get(goal.match_event)
      if (!goals) site.events.set(goal.match_event, (goals = { ids: [], conditional: [] }))
      if (goal.match_properties?.length) goals.conditional.push({ id: goal.id, test: compileConditions(goal.match_properties) })
      else goals.ids.push(goal.id)
      if (goal.currency !== undefined) site.currencies.set(goal.id, goal.currency)
    }
  }

  remove(goalId: string, siteId: string): void {
    const site = this.#sites.get(siteId)
    if (!site) return
    site.ids = site.ids.filter((id) => id !== goalId)
    site.pages = site.pages.filter((p) => p.id !== goalId)
    site.currencies.delete(goalId)
    for (const [name, goals] of site.events) {
      goals.ids = goals.ids.filter((id) => id !== goalId)
      goals.conditional = goals.conditional.filter((c) => c.id !== goalId)
      if (goals.ids.length === 0 && goals.conditional.length === 0) site.events.delete(name)
    }
  }

  /**
   * Writes the ids of the goals this event completes to `out` from its start, and returns how many:
   * `out` is the caller's, kept from event to event (what lies past the count is left over).
   * Emptying it by its length instead would free its storage and make the next event allocate it.
   */
  matches(siteId: string, page: string | null, e: MatchedEvent, out: string[]): number {
    const site = this.#sites.get(siteId)
    if (!site) return 0
    let n = 0
    const type = e.type
    if (type === 'pageview') {
      if (page === null) return 0
      const pages = site.pages
      for (let i = 0; i < pages.length; i++) if (pages[i].match(page)) out[n++] = pages[i].id
      return n
    }
    const name = type === 'custom_event' ? e.event_name : type === PAYMENT ? PAYMENT : undefined
    if (name === undefined) return 0
    const goals = site.events.get(name)
    if (!goals) return 0
    for (const id of goals.ids) out[n++] = id
    for (const c of goals.conditional) if (c.test(e.properties)) out[n++] = c.id
    return n
  }

  /** ids of every goal of the site */
  goalIds(siteId: string): readonly string[] {
    return this.#sites.get(siteId)?.ids ?? []
  }

  /** The currencies of the site's goals that sum revenue, by goal id (undefined: none does). */
  currencies(siteId: string): Map<string, string> | undefined {
    const c = this.#sites.get(siteId)?.currencies
    return c && c.size > 0 ? c : undefined
  }
}
