import type { LoggedEvent } from '../schema/event.js'
import { SessionCounter, TopK } from '../sketch/index.js'
import { GoalDays, dayOf } from '../goals/index.js'
import type { GoalIndex } from './goal-index.js'
import { firstSight, foldSummary, newSummary, pageOf, type SessionSummary } from './session-summary.js'

export interface SiteState {
  /** distinct sessions per local day */
  days: Map<number, SessionCounter>
  /** per day, the `changes` count at its last change: tells a cached union whether it is stale */
  changedAt: Map<number, number>
  changes: number
  /** unions of windows' days but their last, by "from:to", kept because past days rarely change */
  past: Map<string, { at: number; union: SessionCounter }>
  paths: TopK
  events: TopK
}

/** Keys of everything changed since the last snapshot. */
export interface Dirty {
  summaries: Set<string>
  goalDays: Map<string, Set<number>>
  multiDay: Set<string>
  counters: Map<string, Set<number>>
  topK: Set<string>
}

export const emptyDirty = (): Dirty => ({
  summaries: new Set(), goalDays: new Map(), multiDay: new Set(), counters: new Map(), topK: new Set(),
})

export interface Site {
  timezone: string
}

/**
 * A session hash as a Map key: four UTF-16 units of 16 bits each. It is built per event, and this
 * is 3-4x faster than hex digits (measured: ~0.2 µs against ~0.8 µs); the store spells it in hex.
 */
export const hashKey = (hi: number, lo: number): string =>
  String.fromCharCode(hi >>> 16, hi & 0xffff, lo >>> 16, lo & 0xffff)

/** 16 hex digits of a hash key, as the store's keys spell it */
export function hashKeyHex(hk: string): string {
  let out = ''
  for (let i = 0; i < 4; i++) out += hk.charCodeAt(i).toString(16).padStart(4, '0')
  return out
}

/**
 * The state one partition of the events topic owns: the sessions keyed to it, their goal
 * conversions per day, their per-site-day session sketches and suggestion counters. Sessions never
 * span partitions, so partitions merge by plain sums and unions.
 */
export class PartitionState {
  readonly partition: number
  /** the next offset to fold: everything before it is in this state */
  offset = 0
  readonly summaries = new Map<string, SessionSummary>()
  readonly goals = new Map<string, GoalDays>()
  readonly sites = new Map<string, SiteState>()
  dirty: Dirty = emptyDirty()
  /** summaries a snapshot in progress is writing: not in the store yet, so they must stay */
  writing: Set<string> | null = null
  readonly #exactThreshold: number
  readonly #matched: string[] = []

  constructor(partition: number, exactThreshold: number) {
    this.partition = partition
    this.#exactThreshold = exactThreshold
  }

  get exactThreshold(): number {
    return this.#exactThreshold
  }

  site(siteId: string): SiteState {
    let s = this.sites.get(siteId)
    if (!s) this.sites.set(siteId, (s = { days: new Map(), changedAt: new Map(), changes: 0, past: new Map(), paths: new TopK(), events: new TopK() }))
    return s
  }

  goal(goalId: string): GoalDays {
    let g = this.goals.get(goalId)
    if (!g) this.goals.set(goalId, (g = new GoalDays()))
    return g
  }

  /**
   * Folds one event. The caller has put the session's stored summary into `summaries` if there is
   * one (summaries of cold sessions are read from the store in batches before folding).
   */
  fold(e: LoggedEvent, hi: number, lo: number, hk: string, site: Site, goals: GoalIndex): void {
    const page = pageOf(e)
    const day = dayOf(e.ts, site.timezone)
    let summary = this.summaries.get(hk)
    if (!summary) {
      summary = newSummary(e)
      this.dirty.summaries.add(hk)
    } else {
      // a Map iterates in insertion order: moving a touched session to the end makes the front the least recently used
      this.summaries.delete(hk)
    }
    this.summaries.set(hk, summary)
    if (foldSummary(summary, e, page)) this.dirty.summaries.add(hk)

    const siteState = this.countSession(e.site_id, day, hi, lo)

    if (page !== null && firstSight(summary, 'p' + page)) {
      siteState.paths.add(page, 1, day)
      this.dirty.topK.add(e.site_id)
      this.dirty.summaries.add(hk)
    } else if (e.type === 'custom_event' && e.event_name !== undefined && firstSight(summary, 'e' + e.event_name)) {
      siteState.events.add(e.event_name, 1, day)
      this.dirty.topK.add(e.site_id)
      this.dirty.summaries.add(hk)
    }

    const matched = this.#matched
    matched.length = 0
    goals.matches(e.site_id, e.type, page, e.event_name, matched)
    if (matched.length === 0) return
    const span: [number, number] = [dayOf(summary.first, site.timezone), dayOf(summary.last, site.timezone)]
    for (const goalId of matched) this.recordConversion(goalId, hi, lo, day, e.ts, span)
  }

  /** Adds a session to its site's distinct count of a day. */
  countSession(siteId: string, day: number, hi: number, lo: number): SiteState {
    const siteState = this.site(siteId)
    let counter = siteState.days.get(day)
    if (!counter) siteState.days.set(day, (counter = new SessionCounter(this.#exactThreshold)))
    if (counter.add(hi, lo)) {
      mark(this.dirty.counters, siteId, day)
      siteState.changedAt.set(day, ++siteState.changes)
    }
    return siteState
  }

  /** Forgets a site's day buckets and its goals' conversions, before they are rebuilt by a replay. */
  clearSite(siteId: string, goalIds: string[]): void {
    const site = this.sites.get(siteId)
    if (site) {
      site.days.clear()
      site.changedAt.clear()
      site.past.clear()
    }
    this.dirty.counters.delete(siteId)
    for (const id of goalIds) {
      this.goals.get(id)?.clear()
      this.dirty.goalDays.delete(id)
      this.dirty.multiDay.delete(id)
    }
  }

  recordConversion(goalId: string, hi: number, lo: number, day: number, ts: number, span?: [number, number]): void {
    const g = this.goal(goalId)
    const multiBefore = g.multiDayVersion
    if (g.record(hi, lo, day, ts, span)) {
      mark(this.dirty.goalDays, goalId, day)
      if (g.multiDayVersion !== multiBefore) this.dirty.multiDay.add(goalId)
    }
  }

  dropGoal(goalId: string): void {
    this.goals.delete(goalId)
    this.dirty.goalDays.delete(goalId)
    this.dirty.multiDay.delete(goalId)
  }

  /** Drops day buckets before `minDay` for one site and its goals; returns what the store must delete. */
  dropBefore(siteId: string, goalIds: string[], minDay: number): { counters: number[]; goalDays: [string, number][] } {
    const out = { counters: [] as number[], goalDays: [] as [string, number][] }
    const site = this.sites.get(siteId)
    if (site) {
      for (const day of site.days.keys()) {
        if (day < minDay) {
          site.days.delete(day)
          site.changedAt.delete(day)
          site.past.clear()
          this.dirty.counters.get(siteId)?.delete(day)
          out.counters.push(day)
        }
      }
    }
    for (const id of goalIds) {
      const g = this.goals.get(id)
      if (!g) continue
      const before = g.multiDayVersion
      for (const day of g.days()) {
        if (day >= minDay) continue
        out.goalDays.push([id, day])
        this.dirty.goalDays.get(id)?.delete(day)
      }
      g.dropBefore(minDay)
      if (g.multiDayVersion !== before) this.dirty.multiDay.add(id)
    }
    return out
  }

  /** takes the dirty keys, leaving an empty set behind (for a snapshot in progress) */
  takeDirty(): Dirty {
    const d = this.dirty
    this.dirty = emptyDirty()
    return d
  }

  /** puts back keys of a snapshot that failed */
  restoreDirty(d: Dirty): void {
    for (const k of d.summaries) this.dirty.summaries.add(k)
    for (const [g, days] of d.goalDays) for (const day of days) mark(this.dirty.goalDays, g, day)
    for (const g of d.multiDay) this.dirty.multiDay.add(g)
    for (const [s, days] of d.counters) for (const day of days) mark(this.dirty.counters, s, day)
    for (const s of d.topK) this.dirty.topK.add(s)
  }

  /**
   * Forgets the least recently used clean summaries until at most `max` are held (the store keeps
   * them); dirty ones wait for the next snapshot. Returns how many are still over the cap.
   */
  evictOver(max: number): number {
    let over = this.summaries.size - max
    if (over <= 0) return 0
    for (const hk of this.summaries.keys()) {
      if (over <= 0) break
      if (this.dirty.summaries.has(hk) || this.writing?.has(hk)) continue
      this.summaries.delete(hk)
      over--
    }
    return over
  }

  /** Forgets clean summaries of sessions idle since before `cutoff` (they stay in the store). */
  evictSummaries(cutoff: number): number {
    let n = 0
    for (const [hk, s] of this.summaries) {
      if (s.last < cutoff && !this.dirty.summaries.has(hk) && !this.writing?.has(hk)) {
        this.summaries.delete(hk)
        n++
      }
    }
    return n
  }
}

function mark(m: Map<string, Set<number>>, key: string, day: number): void {
  let s = m.get(key)
  if (!s) m.set(key, (s = new Set()))
  s.add(day)
}
