/**
 * One goal's conversions broken down by a session attribute (docs/api.md §9.4). Conversions are
 * exact: the fold counts each goal's conversions of a day by the sessions' attribute values
 * (goals/value-tallies.ts), and a partition adds up the window's days, less the sessions counted
 * on several of them. While a partition's counts are being built (after a restore or a replay), it
 * walks the goal's sessions of the window instead (a part of the hash space at a time, parts.ts)
 * and reads each one's attributes from the session table or its stored summary. Sessions per value
 * come from the per-day value counters the fold keeps, united over the window. Sessions never span
 * partitions, so partials add up.
 */
import type { BreakdownDimension, GoalBreakdown, PartialQuery } from '../schema/index.js'
import { BREAKDOWN_DIMENSIONS } from '../schema/index.js'
import type { GoalDays } from '../goals/index.js'
import { LRUCache } from 'lru-cache'
import type { PartitionState, SiteState } from '../stream/index.js'
import { dimensionIndex, groupOf, summaryAttributes, valueInCombination } from '../stream/index.js'
import { RunningUnion, SessionCounter, U64Map, hashKey } from '../sketch/index.js'
import { partitionSessions, type SummaryLookup } from './partials.js'
import { Turns, eachSession, runInSlices } from './parts.js'

type BreakdownQuery = Extract<PartialQuery, { kind: 'breakdown' }>

/** stored summaries read per store call */
const COLD_SLICE = 4096

/** [value, sessions, conversions] */
export type ValueCount = [string | null, number, number]

export interface BreakdownPartial {
  total_sessions: number
  conversions: number
  values: ValueCount[]
}

/** The breakdown of one partition. Awaits the store for sessions no longer in memory. */
export async function breakdownPartial(state: PartitionState, q: BreakdownQuery, lookup: SummaryLookup): Promise<BreakdownPartial> {
  const d = dimensionIndex(q.by)
  const { from, to } = q.window
  const counts = new Map<string | null, [number, number]>()
  const entry = (value: string | null): [number, number] => {
    let c = counts.get(value)
    if (!c) counts.set(value, (c = [0, 0]))
    return c
  }
  const total = partitionSessions(state, q.site_id, q.window)

  const site = state.sites.get(q.site_id)
  if (site) for (const [value, n] of await sessionsPerValue(site, d, q.window, state.exactThreshold, new Turns())) if (n > 0) entry(value)[0] = n

  let conversions = 0
  const goal = state.goals.get(q.goal_id)
  const byValue = goal === undefined ? undefined : await countedConversions(state, goal, q, d, lookup)
  if (goal !== undefined && byValue !== undefined) {
    conversions = goal.conversions(from, to)
    for (const [value, n] of byValue) if (n !== 0) entry(value)[1] = n
  } else if (goal) {
    const table = state.summaries
    const values = new Array<string | null>(BREAKDOWN_DIMENSIONS.length)
    const cold: string[] = []
    // a part of the sessions at a time (parts.ts), letting folds run between parts
    await runInSlices(eachSession(goal, from, to, (hi, lo) => {
      conversions++
      const slot = table.slotOf(hi, lo)
      if (slot >= 0) entry(table.attributeAt(slot, d))[1]++
      else cold.push(hashKey(hi, lo))
    }))
    // in slices, so that a goal with many sessions out of memory never holds the event loop or
    // reads them all at once; the walk above fixed which sessions count, and a session whose
    // attributes a fold changes meanwhile shows its new value (the next query would too)
    for (let i = 0; i < cold.length; i += COLD_SLICE) {
      const stored = await lookup(state.partition, cold.slice(i, i + COLD_SLICE))
      for (const s of stored) entry(s ? summaryAttributes(s, values)[d] : null)[1]++
    }
  }
  return { total_sessions: total, conversions, values: [...counts].map(([value, [sessions, conv]]) => [value, sessions, conv]) }
}

/**
 * A site's sessions per value over a window: per value, the union of its combinations' counters
 * over the window's days (a session is in one combination of a group, so the union is exact while
 * the counters are). The union of the days before the last is kept, built in turns of the event
 * loop; a day that gained sessions since is merged into it again, and one where a session moved
 * to another value (SiteState.movedAt) makes it build anew. Then, at once: the last day's counters
 * united with it — exactly while under the exact threshold, else merged into a kept sketch of the
 * past (RunningUnion) — and a value whose last-day counters are unchanged answers as before.
 */
async function sessionsPerValue(site: SiteState, d: number, w: { from: number; to: number }, threshold: number, turns: Turns): Promise<Map<string | null, number>> {
  let kept = pastValues.get(site)
  if (kept === undefined) pastValues.set(site, (kept = new LRUCache({ max: PAST_WINDOWS })))
  const key = `${d}:${w.from}:${w.to}`
  let past = kept.get(key)
  if (past === undefined || !current(site, w, past)) {
    // a session moved meanwhile on one of the days: built again, the last time at once
    for (let tries = 0; ; tries++) {
      past = await pastOf(site, d, w, threshold, tries < 3 ? turns : undefined)
      if (current(site, w, past)) break
    }
    kept.set(key, past)
  }
  // synchronous from here: the days that gained sessions, then the last day
  const p = past
  for (let day = w.from; day < w.to; day++) {
    if ((site.changedAt.get(day) ?? 0) <= p.at) continue
    for (const [value, counters] of countersOf(site, d, day)) {
      let union = p.unions.get(value)
      if (union === undefined) p.unions.set(value, (union = new SessionCounter(threshold)))
      for (const c of counters) union.mergeFrom(c)
      p.running.delete(value)
      p.last.delete(value)
    }
  }
  p.at = site.changes
  const lastDay = countersOf(site, d, w.to)
  const out = new Map<string | null, number>()
  for (const [value, union] of p.unions) {
    const today = lastDay.get(value)
    if (today === undefined) {
      out.set(value, union.count())
      continue
    }
    // today's counters as they were when last united with the past: unchanged, so is the union
    let changes = today.length
    for (const c of today) changes += c.changes
    const last = p.last.get(value)
    if (last?.changes === changes) out.set(value, last.n)
    else if (union.isExact && today.every((c) => c.isExact) && !p.sketched.has(value)) {
      const n = SessionCounter.union([union, ...today])
      out.set(value, n)
      // past the threshold the union is a sketch, and only grows: from now on, a running one
      if (n > threshold) p.sketched.add(value)
    }
    else {
      // a sketch already: the past's registers are kept, and today's merged into them as it grows
      let running = p.running.get(value)
      if (running === undefined) {
        p.running.set(value, (running = new RunningUnion()))
        running.merge(union)
      }
      for (const c of today) running.merge(c)
      out.set(value, Math.round(running.estimate()))
    }
    p.last.set(value, { changes, n: out.get(value)! })
  }
  for (const [value, counters] of lastDay) if (!p.unions.has(value)) out.set(value, SessionCounter.union(counters))
  return out
}

/** Whether a kept union of past days can be brought up to date by merging: no day cleared, and no session moved. */
function current(site: SiteState, w: { from: number; to: number }, past: PastValues): boolean {
  let held = 0
  for (let day = w.from; day < w.to; day++) {
    if (site.values.has(day)) held++
    if ((site.movedAt.get(day) ?? 0) > past.at) return false
  }
  // a site's days rebuilt in a new zone start again from none
  return held === past.held
}

/** The union of each value's counters over the window's days but the last, in `turns` (none: at once). */
async function pastOf(site: SiteState, d: number, w: { from: number; to: number }, threshold: number, turns: Turns | undefined): Promise<PastValues> {
  const at = site.changes
  let held = 0
  const unions = new Map<string | null, SessionCounter>()
  for (let day = w.from; day < w.to; day++) {
    if (site.values.has(day)) held++
    for (const [value, counters] of countersOf(site, d, day)) {
      let union = unions.get(value)
      if (union === undefined) unions.set(value, (union = new SessionCounter(threshold)))
      for (const c of counters) union.mergeFrom(c)
      if (turns?.due) await turns.next()
    }
  }
  return { at, held, unions, running: new Map(), last: new Map(), sketched: new Set() }
}

/** A day's counters of one dimension by value (the combinations of its group that hold the value). */
function countersOf(site: SiteState, d: number, day: number): Map<string | null, SessionCounter[]> {
  const out = new Map<string | null, SessionCounter[]>()
  site.values.get(day)?.[groupOf(d)].forEach((combination, counter) => {
    const value = valueInCombination(d, combination)
    const list = out.get(value)
    if (list) list.push(counter)
    else out.set(value, [counter])
  })
  return out
}

/**
 * Builds the kept unions of the site's sessions per value for a window, for every dimension, in
 * turns: what a dashboard's first breakdown of the window would otherwise wait for.
 */
export async function warmSessionsPerValue(state: PartitionState, siteId: string, w: { from: number; to: number }): Promise<void> {
  const site = state.sites.get(siteId)
  if (site === undefined || w.from === w.to) return
  const turns = new Turns()
  for (const by of BREAKDOWN_DIMENSIONS) await sessionsPerValue(site, dimensionIndex(by), w, state.exactThreshold, turns)
}

/** per site, unions of the window's days but its last, per dimension and window */
const pastValues = new WeakMap<SiteState, LRUCache<string, PastValues>>()

interface PastValues {
  /** site.changes when united, and how many of the days held counters */
  at: number
  held: number
  /** per value, its sessions over the window's days but the last */
  unions: Map<string | null, SessionCounter>
  /** per value whose union is a sketch, the union with the last day's counters merged in as they grow */
  running: Map<string | null, RunningUnion>
  /** per value, its answer with the last day, and the sum of the last day's counters' changes then */
  last: Map<string | null, { changes: number; n: number }>
  /** values whose exact union with the last day went past the exact threshold */
  sketched: Set<string | null>
}
/** dashboards ask a few windows of a few dimensions */
const PAST_WINDOWS = 32

/**
 * A goal's conversions per value over the window from its counts per day (ValueTallies), or
 * undefined while they are being counted. A session that converted on k > 1 days of the window is
 * in k days' counts: the goal's side index holds it with its days, and it is taken off k − 1 times
 * under its attributes: the session table's, or, out of memory, those kept (ColdAttributes) or read
 * from the store — the days and the corrections are summed in one synchronous step once every one
 * is at hand (after a read, again), so the answer is the state of one moment.
 */
async function countedConversions(state: PartitionState, goal: GoalDays, q: BreakdownQuery, d: number, lookup: SummaryLookup): Promise<Map<string | null, number> | undefined> {
  const { from, to } = q.window
  const g = groupOf(d)
  const valueOf = (c: readonly (string | null)[]): string | null => valueInCombination(d, c)
  const cache = state.coldAttributes
  const table = state.summaries
  /** sessions read by this query, [hi, lo, …] and their values: kept here even if the cache lets them go */
  const read = new U64Map()
  const readValues: (string | null)[] = []
  for (;;) {
    const tallies = state.tallies.get(q.goal_id)
    if (state.goals.get(q.goal_id) !== goal || tallies === undefined) return undefined
    const days = goal.days().filter((day) => day >= from && day <= to)
    if (!tallies.complete(days)) return undefined
    // synchronous while every session on several days has its attributes at hand: the counts and
    // the corrections are then of one moment
    const out = new Map<string | null, number>()
    for (const day of days) tallies.sumInto(day, d, g, valueOf, out)
    // the sessions whose days all lie before the two newest: their sum kept while what it read holds
    const settled = new SettledCorrection(state, q.goal_id, d, from, (days[days.length - 1] ?? to) - 2)
    const kept = settled.valid()
    const sums = kept ?? new Map<string | null, number>()
    const missing: number[] = []
    goal.forEachIndexed((hi, lo, held) => {
      const isSettled = held[held.length - 1] <= settled.to
      if (isSettled && kept !== undefined) return
      const k = inside(held, from, to)
      if (k < 2) return
      let value: string | null
      const slot = table.slotOf(hi, lo)
      if (slot >= 0) value = table.attributeAt(slot, d)
      else {
        const kept = cache.get(hi, lo)
        const at = kept === undefined ? read.get(hi, lo) : undefined
        if (kept !== undefined) value = kept[d]
        else if (at !== undefined) value = readValues[at]
        else {
          missing.push(hi, lo)
          return
        }
      }
      const into = isSettled ? sums : out
      into.set(value, (into.get(value) ?? 0) - (k - 1))
    })
    if (missing.length === 0) {
      if (kept === undefined) settled.keep(sums)
      for (const [value, n] of sums) out.set(value, (out.get(value) ?? 0) + n)
      return out
    }
    // some are out of memory and not known yet: read them, in slices, and sum again
    for (let i = 0; i < missing.length; i += 2 * COLD_SLICE) {
      const part = missing.slice(i, i + 2 * COLD_SLICE)
      const values = await cache.read(part, (hks) => lookup(state.partition, hks))
      for (let k = 0; k < values.length; k++) {
        read.set(part[2 * k], part[2 * k + 1], readValues.length)
        readValues.push(values[k][d])
      }
    }
  }
}

/**
 * The corrections of a goal's sessions on several days whose days all lie up to `to` (the two
 * newest of the window's days are after it), per value of one attribute and window start: kept
 * under the stamps of side-index changes and attribute moves of those days
 * (PartitionState.acrossStamps, acrossGeneration), since a warm breakdown would otherwise take
 * every such session of the month again.
 */
class SettledCorrection {
  readonly to: number
  readonly #state: PartitionState
  readonly #key: string
  readonly #from: number

  constructor(state: PartitionState, goalId: string, d: number, from: number, to: number) {
    this.to = to
    this.#state = state
    this.#from = from
    this.#key = `${goalId}\n${d}\n${from}\n${to}`
  }

  valid(): Map<string | null, number> | undefined {
    const kept = settledOf(this.#state).get(this.#key)
    if (kept === undefined || kept.generation !== this.#state.acrossGeneration) return undefined
    const stamps = this.#stamps()
    return stamps.every((s, i) => s === kept.stamps[i]) ? kept.sums : undefined
  }

  keep(sums: Map<string | null, number>): void {
    settledOf(this.#state).set(this.#key, { stamps: this.#stamps(), generation: this.#state.acrossGeneration, sums })
  }

  #stamps(): number[] {
    const out: number[] = []
    for (let day = this.#from; day <= this.to; day++) out.push(this.#state.acrossStamps.get(day) ?? 0)
    return out
  }
}

/** per partition, the kept corrections (SettledCorrection) */
const settledCorrections = new WeakMap<PartitionState, LRUCache<string, { stamps: number[]; generation: number; sums: Map<string | null, number> }>>()
/** goals × attributes × windows a partition keeps */
const SETTLED_KEPT = 1024

function settledOf(state: PartitionState): LRUCache<string, { stamps: number[]; generation: number; sums: Map<string | null, number> }> {
  let cache = settledCorrections.get(state)
  if (cache === undefined) settledCorrections.set(state, (cache = new LRUCache({ max: SETTLED_KEPT })))
  return cache
}

/** How many of `days` lie in [from, to]. */
function inside(days: ArrayLike<number>, from: number, to: number): number {
  let n = 0
  for (let i = 0; i < days.length; i++) if (days[i] >= from && days[i] <= to) n++
  return n
}

export function mergeBreakdowns(partials: BreakdownPartial[]): BreakdownPartial {
  const counts = new Map<string | null, [number, number]>()
  let total = 0
  let conversions = 0
  for (const p of partials) {
    total += p.total_sessions
    conversions += p.conversions
    for (const [value, sessions, conv] of p.values) {
      const c = counts.get(value)
      if (c) {
        c[0] += sessions
        c[1] += conv
      } else counts.set(value, [sessions, conv])
    }
  }
  return { total_sessions: total, conversions, values: [...counts].map(([value, [sessions, conv]]) => [value, sessions, conv]) }
}

/** Most conversions first; ties by value, null last among its ties. */
export function byConversions(a: ValueCount, b: ValueCount): number {
  if (a[2] !== b[2]) return b[2] - a[2]
  if (a[0] === b[0]) return 0
  if (a[0] === null) return 1
  if (b[0] === null) return -1
  return a[0] < b[0] ? -1 : 1
}

const rate = (n: number, of: number): number => (of === 0 ? 0 : n / of)

export function breakdownBody(goalId: string, days: number, by: BreakdownDimension, limit: number, merged: BreakdownPartial): GoalBreakdown {
  const ranked = merged.values.filter((v) => v[2] > 0).sort(byConversions)
  const top = ranked.slice(0, limit)
  const shown = new Set(top.map((v) => v[0]))
  let otherSessions = 0
  let otherConversions = 0
  let others = 0
  for (const [value, sessions, conv] of merged.values) {
    if (shown.has(value)) continue
    others++
    otherSessions += sessions
    otherConversions += conv
  }
  return {
    goal_id: goalId,
    days,
    by,
    total_sessions: merged.total_sessions,
    conversions: merged.conversions,
    rows: top.map(([value, sessions, conversions]) => ({ value, sessions, conversions, conversion_rate: rate(conversions, sessions) })),
    other: others === 0 ? null : { sessions: otherSessions, conversions: otherConversions },
  }
}
