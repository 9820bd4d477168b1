import { LRUCache } from 'lru-cache'
import type { LoggedEvent } from '../schema/index.js'
import { CombinationCounters, SessionCounter, TopK } from '../sketch/index.js'
import { GoalDays, OTHER, RevenueDays, ValueTallies, dayOf, dayTime, dayOfHourKey, dayStart, hourIndex, hourKey, parseAmount, revenueKey, todayOf } from '../goals/index.js'
import { hashHex } from '../sketch/index.js'
import { turnDue, type Dirty, type DirtyKeys, type DroppedKeys, type PartitionImage, type SiteImage, type TallyCheck } from '../store/index.js'
import type { GoalIndex } from './goal-index.js'
import { pageOf } from './session-summary.js'
import { ATTRIBUTES_CHANGED, SEEN_EVENT, SEEN_PAGE, SessionTable } from './session-table.js'
import { DIMENSIONS, GROUP_DIMENSIONS, GROUPS } from './session-attributes.js'
import { ColdAttributes } from './cold-attributes.js'
import { SettledDays } from './settled-days.js'

export interface SiteState extends SiteImage {
  /** per day's `changedAt`: the `changes` count at its last change, which tells a cached union whether it is stale */
  changes: number
  /**
   * per day, the `changes` count when a session last moved between breakdown value counters
   * there: a kept union of a value's counters can take in what a day gained, not what it lost
   */
  movedAt: Map<number, number>
  /** unions of windows' days but their last, by "from:to", kept because past days rarely change */
  past: LRUCache<string, { at: number; union: SessionCounter }>
  /** the first day whose hours are counted (undefined until the site's first event here) */
  hourFloor: number | undefined
  /** the start instants of the recent days, by day: an event's hour is counted from its day's start */
  dayStarts: Map<number, number>
}

/**
 * Days whose hours are kept: hourly reports cover at most 7 days, and one more day spares a
 * report asked right after midnight in one zone while the floor was set in another hour.
 */
export const HOUR_DAYS = 8

/** the kinds of a partition's state that `memory` weighs */
export type StateKind = 'summaries' | 'goals' | 'counters'

/** dashboards ask a handful of windows (7, 30, 90 days…); more than this and the least used goes */
const PAST_WINDOWS = 8

export const emptyDirty = (): DirtyKeys => ({
  goalDays: new Map(), multiDay: new Map(), counters: new Map(), siteHours: new Map(), goalHours: new Map(), goalTimes: new Map(), topK: new Set(),
  revenueDays: new Map(), values: new Map(),
})

export interface Site {
  timezone: string
}

let acrossStamp = 0

/**
 * The state one partition of the events topic owns: the sessions keyed to it, their goal
 * conversions per day, their per-site-day session sketches and suggestion counters. Sessions never
 * span partitions, so partitions merge by plain sums and unions.
 */
export class PartitionState implements PartitionImage {
  readonly partition: number
  /** the next offset to fold: everything before it is in this state */
  offset = 0
  /** hot session summaries; the rest are in the store */
  readonly summaries = new SessionTable()
  readonly goals = new Map<string, GoalDays>()
  /** the settled days whose sets are in the store only, and how they come back (settled-days.ts) */
  readonly settled = new SettledDays(this.goals)
  /** revenue of the goals that have a currency (docs/api.md §9.2) */
  readonly revenue = new Map<string, RevenueDays>()
  readonly sites = new Map<string, SiteState>()
  /** per goal, its conversions of each day by the converted sessions' attribute values */
  readonly tallies = new Map<string, ValueTallies>()
  /** attributes of sessions out of memory that queries read again (breakdowns' sessions on several days) */
  readonly coldAttributes = new ColdAttributes()
  readonly valuesWritten = new WeakMap<SessionCounter, number>()
  /**
   * Whether every session converting the sites' goals on several days is in those goals' side
   * indexes (linkAcross, link-across.ts): the fold keeps it so, and a restored state is linked by a
   * pass over its days first, since a snapshot of an older build did not keep it. Until then
   * overlap and funnels walk every session.
   */
  linkedAcross = false
  /**
   * Per day, a stamp taken whenever a side index changed for a session with a day in its span
   * (any goal), or such a session moved to other attribute values: a result derived from the
   * indexed sessions of some days (query/day-joins.ts, breakdown.ts) is still good while these
   * days' stamps are. `acrossGeneration` changes when index changes
   * cannot be placed on days (replays, the link pass, retention, deletions).
   */
  readonly acrossStamps = new Map<number, number>()
  acrossGeneration = 0
  dirty: DirtyKeys = emptyDirty()
  readonly #exactThreshold: number
  /** the goals an event completes (GoalIndex.matches) and its session's span of days: kept, written per event */
  readonly #matched: string[] = []
  readonly #span: [number, number] = [0, 0]
  /** a session's attributes before and after a fold (reused: the fold allocates nothing per event for them) */
  readonly #before = new Array<string | null>(DIMENSIONS).fill(null)
  readonly #after = new Array<string | null>(DIMENSIONS).fill(null)
  readonly #heldDays: number[] = []

  constructor(partition: number, exactThreshold: number) {
    this.partition = partition
    this.#exactThreshold = exactThreshold
    this.summaries.onPassage = (hi, lo) => this.coldAttributes.passed(hi, lo)
  }

  get exactThreshold(): number {
    return this.#exactThreshold
  }

  site(siteId: string): SiteState {
    let s = this.sites.get(siteId)
    if (!s) {
      this.sites.set(siteId, (s = {
        days: new Map(), hours: new Map(), values: new Map(), changedAt: new Map(), movedAt: new Map(), changes: 0, past: new LRUCache({ max: PAST_WINDOWS }),
        paths: new TopK(), events: new TopK(), hourFloor: undefined, dayStarts: new Map(),
      }))
    }
    return s
  }

  letGo(goalId: string, day: number): void {
    const g = this.goals.get(goalId)
    if (g !== undefined) this.settled.evict(g, [day])
  }

  /**
   * Runs `fn` with one settled day of the given goals in memory, read back for it alone, and lets
   * the days it read go again afterwards, unless changed meanwhile (the store lacks the change
   * until a snapshot), read back by others since, or other work holds the partition's days: a walk
   * over many settled days holds one at a time (settled-days.ts).
   */
  async withSettledDay<T>(goalIds: readonly string[], day: number, fn: () => T | Promise<T>): Promise<T> {
    const settled = this.settled
    const read = goalIds.filter((id) => this.goals.get(id)?.isStored(day))
    try {
      return await settled.holding(async () => {
        await Promise.all(read.map((id) => settled.load(id, [day], false)))
        return fn()
      })
    } finally {
      // a day let go walks the side index's recent sessions (GoalDays.evict): other work gets a turn
      // between goals once this turn's budget is spent, and what it changed meanwhile is looked at after
      for (const id of read) {
        const due = turnDue()
        if (due) await due
        const g = this.goals.get(id)
        // work pinned meanwhile (a replay, a recount) may count on the day staying: the pass lets it go then
        if (g !== undefined && this.unchanged(id, day) && settled.writing === 0 && settled.pins === 0) settled.evict(g, [day])
      }
    }
  }

  /** Whether a goal's day (its set and its times) has no change a snapshot has still to take. */
  unchanged(goalId: string, day: number): boolean {
    return !this.dirty.goalDays.get(goalId)?.has(day) && !this.dirty.goalTimes.get(goalId)?.has(day)
  }

  goal(goalId: string): GoalDays {
    let g = this.goals.get(goalId)
    if (!g) this.goals.set(goalId, (g = new GoalDays()))
    return g
  }

  revenueOf(goalId: string): RevenueDays {
    let r = this.revenue.get(goalId)
    if (!r) this.revenue.set(goalId, (r = new RevenueDays()))
    return r
  }

  /**
   * Folds one event of the session with hash (hi, lo). The caller has loaded the session's stored
   * summary into `summaries` if there is one (summaries of cold sessions are read from the store
   * in batches before folding). `offset`, the record's place in the partition's log, identifies
   * revenue events without an `event_id` across replays.
   */
  fold(e: LoggedEvent, hi: number, lo: number, site: Site, goals: GoalIndex, offset = -1): void {
    const page = pageOf(e)
    const day = dayOf(e.ts, site.timezone)
    const table = this.summaries
    let slot = table.slotOf(hi, lo)
    // a new session has been counted under no value yet: nothing to move when its attributes change
    let before: (string | null)[] | null = null
    if (slot < 0) {
      slot = table.insert(hi, lo, e)
      table.markDirty(slot)
    } else {
      table.touch(slot)
      before = this.#before
    }
    const changed = table.fold(slot, e, page, before)
    if (changed) table.markDirty(slot)

    const siteState = this.countSession(e.site_id, day, hi, lo)
    const hour = this.hourOf(siteState, e.ts, day, site.timezone)
    if (hour >= 0 && table.countsInHour(slot, hour)) this.countHour(e.site_id, siteState, hour, hi, lo)
    // attributes are counted once per session and day, and moved when an earlier event changes them
    /** the session's attributes as this event leaves them, once read */
    let values: (string | null)[] | undefined
    if (table.countedDay(slot) !== day) {
      table.setCountedDay(slot, day)
      this.countValues(e.site_id, siteState, day, (values = table.attributes(slot, this.#after)), hi, lo)
    }
    if (changed & ATTRIBUTES_CHANGED && before !== null) {
      const after = (values ??= table.attributes(slot, this.#after))
      const span = table.spanDays(slot, site.timezone, this.#span)
      const fromDay = span[0]
      const toDay = span[1]
      this.moveValues(e.site_id, siteState, before, after, fromDay, toDay, hi, lo)
      this.moveTallies(goals.goalIds(e.site_id), before, after, fromDay, toDay, hi, lo)
    }

    if (page !== null && table.firstSight(slot, SEEN_PAGE, page)) {
      siteState.paths.add(page, 1, day)
      this.dirty.topK.add(e.site_id)
      table.markDirty(slot)
    } else if (e.type === 'custom_event' && e.event_name !== undefined && table.firstSight(slot, SEEN_EVENT, e.event_name)) {
      siteState.events.add(e.event_name, 1, day)
      this.dirty.topK.add(e.site_id)
      table.markDirty(slot)
    }

    const matched = this.#matched
    const count = goals.matches(e.site_id, page, e, matched)
    if (count === 0) return
    const span = table.spanDays(slot, site.timezone, this.#span)
    const time = dayTime(e.ts, day)
    let newDay = false
    for (let m = 0; m < count; m++) {
      const goalId = matched[m]
      // taken before the conversion is recorded: a goal holding conversions without counts is counted from its sets
      const tallies = this.talliesOf(goalId)
      if (!this.recordConversionAt(goalId, hi, lo, day, time, span, hour)) {
        // a restore may have counted it without values (tally-values.ts): its values are known now
        if (tallies.hasBlank) tallies.fillBlank(day, (values ??= table.attributes(slot, this.#after)), hi, lo)
        continue
      }
      newDay = true
      tallies.add(day, (values ??= table.attributes(slot, this.#after)), hi, lo)
    }
    if (newDay && span[0] !== span[1]) this.linkAcross(goals.goalIds(e.site_id), hi, lo, span[0], span[1])
    if (e.revenue !== undefined) {
      const currencies = goals.currencies(e.site_id)
      if (currencies) this.recordRevenue(e, hi, lo, day, offset, matched, currencies, count)
    }
  }

  /**
   * Joins the revenue an event carries into those of the goals it completed that have a currency:
   * the amount when the currencies agree, else an other-currency mark (docs/api.md §9.2).
   */
  recordRevenue(
    e: LoggedEvent, hi: number, lo: number, day: number, offset: number, matched: readonly string[], currencies: Map<string, string>, count = matched.length,
  ): void {
    const revenue = e.revenue!
    let key: string | undefined
    let units: bigint | undefined
    for (let m = 0; m < count; m++) {
      const goalId = matched[m]
      const currency = currencies.get(goalId)
      if (currency === undefined) continue
      if (currency === revenue.currency) {
        units ??= parseAmount(revenue.amount)
        if (units === undefined) return
      }
      key ??= revenueKey(hashHex(hi, lo), e.event_id, offset)
      const changedDays = this.revenueOf(goalId).record(key, day, currency === revenue.currency ? units! : OTHER)
      if (changedDays.length) {
        let dirty = this.dirty.revenueDays.get(goalId)
        if (!dirty) this.dirty.revenueDays.set(goalId, (dirty = new Set()))
        for (const d of changedDays) dirty.add(d)
      }
    }
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

  valueCounters(siteId: string, day: number): CombinationCounters[] {
    const values = this.site(siteId).values
    let counters = values.get(day)
    if (!counters) values.set(day, (counters = GROUP_DIMENSIONS.map((dims) => new CombinationCounters(dims.length))))
    return counters
  }

  /**
   * Adds a session to the counters of its attributes' values (attributeValues' order) on a day:
   * one counter per group of attributes (session-attributes.ts).
   */
  countValues(siteId: string, s: SiteState, day: number, values: readonly (string | null)[], hi: number, lo: number): void {
    const counters = s.values.get(day) ?? this.valueCounters(siteId, day)
    let changed = false
    for (let g = 0; g < GROUPS; g++) if (counters[g].counter(values, GROUP_DIMENSIONS[g], this.#exactThreshold).add(hi, lo)) changed = true
    if (changed) {
      mark(this.dirty.values, siteId, day)
      // unions of past days cached by queries read the day's value counters too
      s.changedAt.set(day, ++s.changes)
    }
  }

  /**
   * Moves a session whose attributes changed from the old values' counters to the new ones', on
   * each day of its span where it was counted. Past the exact threshold an old counter cannot
   * tell or forget: the session is counted under the new value too (the sketch's error).
   */
  moveValues(siteId: string, s: SiteState, before: readonly (string | null)[], after: readonly (string | null)[], fromDay: number, toDay: number, hi: number, lo: number): void {
    // the groups holding a dimension whose value changed, as bits
    let moved = 0
    for (let g = 0; g < GROUPS; g++) if (differs(GROUP_DIMENSIONS[g], before, after)) moved |= 1 << g
    if (moved === 0) return
    for (let day = fromDay; day <= toDay; day++) {
      const counters = s.values.get(day)
      if (!counters) continue
      for (let g = 0; g < GROUPS; g++) {
        if ((moved & (1 << g)) === 0) continue
        const dims = GROUP_DIMENSIONS[g]
        const old = counters[g].get(before, dims)
        if (!old) continue
        const removed = old.remove(hi, lo)
        if (!removed && old.isExact) continue
        counters[g].counter(after, dims, this.#exactThreshold).add(hi, lo)
        mark(this.dirty.values, siteId, day)
        s.changedAt.set(day, ++s.changes)
        s.movedAt.set(day, s.changes)
      }
    }
  }

  /**
   * A goal's counts of conversions by attribute values. Created for a goal that already holds
   * conversions (a restored state), they wait to be counted from its sets (stream/tally-values.ts).
   */
  talliesOf(goalId: string): ValueTallies {
    let t = this.tallies.get(goalId)
    if (t === undefined) this.tallies.set(goalId, (t = new ValueTallies(GROUP_DIMENSIONS, (this.goals.get(goalId)?.size ?? 0) > 0)))
    return t
  }

  /**
   * Moves a session whose attributes changed in the counts of every goal it converted, on each day
   * of its span (its conversions lie there): a lookup per goal and day, only when an event earlier
   * than the session's first changes where it came from.
   */
  moveTallies(goalIds: readonly string[], before: readonly (string | null)[], after: readonly (string | null)[], fromDay: number, toDay: number, hi: number, lo: number): void {
    const days = this.#heldDays
    let moved = false
    for (const id of goalIds) {
      const tallies = this.tallies.get(id)
      const g = this.goals.get(id)
      if (tallies === undefined || g === undefined) continue
      days.length = 0
      g.heldDaysIn(hi, lo, fromDay, toDay, days)
      for (const day of days) tallies.move(day, before, after, hi, lo)
      if (days.length > 0) moved = true
    }
    // what a query kept of the sessions on several days of the span now has this one elsewhere
    if (moved) this.#acrossChanged([fromDay, toDay])
  }

  /** The goals' counts start again from their sets: a replay adds conversions without attributes. */
  retally(goalIds: readonly string[]): void {
    for (const id of goalIds) this.tallies.set(id, new ValueTallies(GROUP_DIMENSIONS, true))
  }

  /**
   * The hour (`hourKey`) of an event of day `day` at `ts` in the site's zone, or -1 when the day is
   * older than the hours kept.
   */
  hourOf(s: SiteState, ts: number, day: number, tz: string): number {
    s.hourFloor ??= todayOf(tz) - HOUR_DAYS + 1
    if (day < s.hourFloor) return -1
    let start = s.dayStarts.get(day)
    if (start === undefined) s.dayStarts.set(day, (start = dayStart(day, tz)))
    return hourKey(day, hourIndex(ts, start))
  }

  /** Adds a session to its site's distinct count of an hour. */
  countHour(siteId: string, s: SiteState, hour: number, hi: number, lo: number): void {
    let counter = s.hours.get(hour)
    if (!counter) s.hours.set(hour, (counter = new SessionCounter(this.#exactThreshold)))
    if (counter.add(hi, lo)) mark(this.dirty.siteHours, siteId, hour)
  }

  /** Forgets a site's day buckets and its goals' conversions, before they are rebuilt by a replay. */
  clearSite(siteId: string, goalIds: string[]): void {
    this.acrossGeneration++
    const site = this.sites.get(siteId)
    if (site) {
      site.days.clear()
      site.hours.clear()
      site.values.clear()
      site.changedAt.clear()
      site.movedAt.clear()
      site.past.clear()
      // the zone changed: days start elsewhere
      site.dayStarts.clear()
      site.hourFloor = undefined
    }
    this.dirty.counters.delete(siteId)
    this.dirty.siteHours.delete(siteId)
    this.dirty.values.delete(siteId)
    this.retally(goalIds)
    for (const id of goalIds) {
      this.goals.get(id)?.clear()
      this.revenue.get(id)?.clear()
      this.dirty.goalDays.delete(id)
      this.dirty.goalHours.delete(id)
      this.dirty.goalTimes.delete(id)
      this.dirty.multiDay.delete(id)
      this.dirty.revenueDays.delete(id)
    }
  }

  /**
   * Records a completion on `day` at `ts`, and in `hour` (an `hourKey`) unless it is -1. True iff
   * the session is new to the goal's day.
   */
  recordConversion(goalId: string, hi: number, lo: number, day: number, ts: number, span?: [number, number], hour = -1): boolean {
    return this.recordConversionAt(goalId, hi, lo, day, dayTime(ts, day), span, hour)
  }

  /** `recordConversion` at a time given as `dayTime(ts, day)`: how the fold hands it on */
  recordConversionAt(goalId: string, hi: number, lo: number, day: number, time: number, span?: [number, number], hour = -1): boolean {
    const g = this.goal(goalId)
    const multiBefore = g.multiDayVersion
    const sizeBefore = g.size
    if (g.recordTimeAt(hi, lo, day, time)) changed(this.dirty.goalTimes, goalId, day).push(hi, lo)
    if (g.recordAt(hi, lo, day, time, span)) {
      changed(this.dirty.goalDays, goalId, day).push(hi, lo)
      // the session just recorded is the one the index linked to its other days
      if (g.multiDayVersion !== multiBefore) {
        multiDayChanged(this.dirty.multiDay, goalId)?.push(hi, lo)
        this.#acrossChanged(span)
      }
    }
    if (hour >= 0 && g.recordHour(hi, lo, hour)) changed(this.dirty.goalHours, goalId, hour).push(hi, lo)
    return g.size !== sizeBefore
  }

  /**
   * A session whose events span days converted a goal on a day new to it. When its conversions of
   * the site's goals (`goalIds`) now fall on more than one day, every goal it converted indexes it
   * with its days: overlap and funnels then find each day of such a session in the goals' side
   * indexes (query/day-joins.ts) and can take the other sessions one day at a time. A session's
   * conversions lie in its span, so the search reads `goalIds` × the span's days. Rare: only a
   * session seen on two days, at a new goal-day of it.
   */
  linkAcross(goalIds: readonly string[], hi: number, lo: number, fromDay: number, toDay: number): void {
    const found: (number[] | undefined)[] = []
    let first = NaN
    let several = false
    for (let i = 0; i < goalIds.length; i++) {
      const g = this.goals.get(goalIds[i])
      if (g === undefined) continue
      const days: number[] = []
      g.heldDaysIn(hi, lo, fromDay, toDay, days)
      if (days.length === 0) continue
      found[i] = days
      for (const d of days) {
        if (Number.isNaN(first)) first = d
        else if (d !== first) several = true
      }
    }
    if (!several) return
    for (let i = 0; i < goalIds.length; i++) {
      const days = found[i]
      if (days !== undefined) this.indexAcross(goalIds[i], hi, lo, days, [fromDay, toDay])
    }
  }

  /**
   * Indexes a session in a goal's side index with held days of its own (GoalDays.indexAcross);
   * `span`: the days of the session's events, when known.
   */
  indexAcross(goalId: string, hi: number, lo: number, days: readonly number[], span?: readonly [number, number]): void {
    if (!this.goals.get(goalId)?.indexAcross(hi, lo, days)) return
    multiDayChanged(this.dirty.multiDay, goalId)?.push(hi, lo)
    this.#acrossChanged(span)
  }

  /** A side index changed for a session whose events span `span` (unknown: every day). */
  #acrossChanged(span: readonly [number, number] | undefined): void {
    if (span === undefined) {
      this.acrossGeneration++
      return
    }
    const stamp = ++acrossStamp
    for (let d = span[0]; d <= span[1]; d++) this.acrossStamps.set(d, stamp)
  }

  dropGoal(goalId: string): void {
    this.acrossGeneration++
    this.goals.delete(goalId)
    this.tallies.delete(goalId)
    this.revenue.delete(goalId)
    this.dirty.goalDays.delete(goalId)
    this.dirty.goalHours.delete(goalId)
    this.dirty.goalTimes.delete(goalId)
    this.dirty.multiDay.delete(goalId)
    this.dirty.revenueDays.delete(goalId)
  }

  /**
   * Drops day buckets before `minDay` and hours before `hourFloor` for one site and its goals;
   * returns what the store must delete.
   */
  dropBefore(siteId: string, goalIds: string[], minDay: number, hourFloor = minDay): DroppedKeys {
    this.acrossGeneration++
    const out: DroppedKeys = { counters: [], goalDays: [], siteHours: [], goalHours: [], revenueDays: [], valueDays: [] }
    const hoursFrom = Math.max(hourFloor, minDay)
    const site = this.sites.get(siteId)
    if (site) {
      for (const day of site.days.keys()) {
        if (day < minDay) {
          site.days.delete(day)
          site.changedAt.delete(day)
          site.movedAt.delete(day)
          site.past.clear()
          this.dirty.counters.get(siteId)?.delete(day)
          out.counters.push(day)
        }
      }
      for (const day of site.values.keys()) {
        if (day < minDay) {
          site.values.delete(day)
          this.dirty.values.get(siteId)?.delete(day)
          out.valueDays.push(day)
        }
      }
      site.hourFloor = Math.max(site.hourFloor ?? hoursFrom, hoursFrom)
      for (const day of site.dayStarts.keys()) if (day < hoursFrom) site.dayStarts.delete(day)
      for (const key of site.hours.keys()) {
        if (dayOfHourKey(key) < hoursFrom) {
          site.hours.delete(key)
          this.dirty.siteHours.get(siteId)?.delete(key)
          out.siteHours.push(key)
        }
      }
    }
    for (const id of goalIds) {
      for (const day of this.revenue.get(id)?.dropBefore(minDay) ?? []) {
        out.revenueDays.push([id, day])
        this.dirty.revenueDays.get(id)?.delete(day)
      }
      const g = this.goals.get(id)
      if (!g) continue
      for (const key of g.dropHoursBefore(hoursFrom)) {
        this.dirty.goalHours.get(id)?.delete(key)
        out.goalHours.push([id, key])
      }
      const before = g.multiDayVersion
      for (const day of g.days()) {
        if (day >= minDay) continue
        out.goalDays.push([id, day])
        this.dirty.goalDays.get(id)?.delete(day)
        this.dirty.goalTimes.get(id)?.delete(day)
      }
      g.dropBefore(minDay)
      this.tallies.get(id)?.dropBefore(minDay)
      if (g.multiDayVersion !== before) this.dirty.multiDay.set(id, null)
    }
    return out
  }

  /**
   * Takes the dirty keys and summaries, leaving an empty set behind, for a snapshot; its summaries
   * stay in memory until `written`.
   */
  takeDirty(): Dirty {
    const d = this.dirty
    this.dirty = emptyDirty()
    // each goal day whose counts by value or set changed, as it is now: the snapshot writes its
    // counts only if both still are when it ends, so stored counts always match the stored sets
    const tallies = new Map<string, Map<number, TallyCheck>>()
    const check = (goal: string, day: number): void => {
      const t = this.tallies.get(goal)
      const g = this.goals.get(goal)
      if (t === undefined || g === undefined) return
      let days = tallies.get(goal)
      if (days === undefined) tallies.set(goal, (days = new Map<number, TallyCheck>()))
      days.set(day, { of: t, version: t.versionOf(day), stamp: g.dayStamp(day) })
    }
    for (const [goal, t] of this.tallies) for (const day of t.takeDirty()) check(goal, day)
    for (const [goal, days] of d.goalDays) for (const day of days.keys()) check(goal, day)
    // taken with the keys: links the pass adds after this moment are in a later snapshot
    return { ...d, summaries: this.summaries.takeDirty(), linkedAcross: this.linkedAcross, tallies }
  }

  /** the snapshot of `d` is over, written or not: its summaries may leave memory again */
  written(d: Dirty): void {
    this.summaries.written(d.summaries)
  }

  /** puts back keys of a snapshot that failed */
  restoreDirty(d: Dirty): void {
    this.summaries.restore(d.summaries)
    for (const [goal, days] of d.tallies ?? []) for (const day of days.keys()) this.tallies.get(goal)?.markDirty(day)
    for (const [into, from] of [[this.dirty.goalDays, d.goalDays], [this.dirty.goalHours, d.goalHours], [this.dirty.goalTimes, d.goalTimes]]) {
      for (const [g, days] of from) {
        for (const [day, keys] of days) {
          const to = changed(into, g, day)
          for (const k of keys) to.push(k)
        }
      }
    }
    for (const [g, keys] of d.multiDay) {
      if (keys === null) this.dirty.multiDay.set(g, null)
      else {
        const into = multiDayChanged(this.dirty.multiDay, g)
        if (into) for (const k of keys) into.push(k)
      }
    }
    for (const [g, days] of d.revenueDays) for (const day of days) mark(this.dirty.revenueDays, g, day)
    for (const [s, days] of d.counters) for (const day of days) mark(this.dirty.counters, s, day)
    for (const [s, hours] of d.siteHours) for (const hour of hours) mark(this.dirty.siteHours, s, hour)
    for (const s of d.topK) this.dirty.topK.add(s)
    for (const [s, days] of d.values) {
      for (const day of days) {
        mark(this.dirty.values, s, day)
        // what the failed snapshot marked written was not: write the day's counters again
        for (const group of this.sites.get(s)?.values.get(day) ?? []) group.forEach((_, c) => this.valuesWritten.delete(c))
      }
    }
  }

  /**
   * Forgets the least recently used clean summaries until at most `max` are held (the store keeps
   * them); dirty ones wait for the next snapshot. Returns how many are still over the cap.
   */
  evictOver(max: number): number {
    return this.summaries.evictOver(max)
  }

  /**
   * Bytes one kind of this partition's state holds in memory: hot session summaries, goals' sets
   * (days, hours, the multi-day index, completion times), or the sites' distinct-session counters
   * (days, hours, breakdown values). Walks every set of the kind: for status pages, not the hot path.
   */
  memory(kind: StateKind): number {
    let bytes = 0
    if (kind === 'summaries') bytes = this.summaries.memoryBytes()
    else if (kind === 'goals') {
      for (const g of this.goals.values()) bytes += g.memoryBytes()
      for (const t of this.tallies.values()) bytes += t.memoryBytes()
    }
    else {
      for (const site of this.sites.values()) {
        for (const c of site.days.values()) bytes += c.memoryBytes()
        for (const c of site.hours.values()) bytes += c.memoryBytes()
        // a combination's key: its values, in a map level each (~64 B apiece beside the strings)
        for (const day of site.values.values()) for (const group of day) group.forEach((combination, c) => (bytes += c.memoryBytes() + 64 * combination.length))
      }
    }
    return bytes
  }

  /** Forgets clean summaries of sessions idle since before `cutoff` (they stay in the store). */
  evictSummaries(cutoff: number): number {
    return this.summaries.evictIdle(cutoff)
  }
}

function mark(m: Map<string, Set<number>>, key: string, day: number): void {
  let s = m.get(key)
  if (!s) m.set(key, (s = new Set()))
  s.add(day)
}

/** the changed sessions' list of a goal's multi-day index, or undefined when it is to be written whole */
function multiDayChanged(m: Map<string, number[] | null>, goal: string): number[] | undefined {
  let keys = m.get(goal)
  if (keys === undefined) m.set(goal, (keys = []))
  return keys ?? undefined
}

/** the changed sessions' list of a goal's day (or hour) */
function changed(m: Map<string, Map<number, number[]>>, goal: string, day: number): number[] {
  let days = m.get(goal)
  if (!days) m.set(goal, (days = new Map<number, number[]>()))
  let keys = days.get(day)
  if (!keys) days.set(day, (keys = []))
  return keys
}

/** whether two sessions' attributes differ in any of these dimensions */
function differs(dims: readonly number[], before: readonly (string | null)[], after: readonly (string | null)[]): boolean {
  for (let i = 0; i < dims.length; i++) if (before[dims[i]] !== after[dims[i]]) return true
  return false
}
