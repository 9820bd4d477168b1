/**
 * Overlap and funnels a day at a time, with the days that do not change answered from a cache.
 *
 * A join over a window walks every converted session of it (parts.ts): at a busy site's month,
 * millions. But a session converting the site's goals on one day only is counted by the join of
 * that day alone, and the days before yesterday rarely change. So a partition's answer is
 *
 *   Σ over the window's days d of join(d)  +  Σ over the sessions converting on several days of
 *   (their answer over the window − the sum of their answers over each of its days)
 *
 * where join(d) is the join of the window [d, d] — kept per day under the stamps of the goals'
 * day sets it read (GoalDays.dayStamp), so only a changed day is walked again — and the sessions
 * on several days are exactly those the goals' side indexes hold with their days (the fold keeps
 * them there: PartitionState.linkAcross), a few per cent of the sessions, taken one by one.
 *
 * Days whose cached join is missing or stale are walked first, in slices, letting the fold run;
 * then one synchronous step checks every day's stamps, walks any day changed meanwhile (today,
 * mostly) and adds the corrections, so the answer is the state of that one moment.
 */
import { RECENT_PART_BITS, type GoalDays } from '../goals/index.js'
import type { PartialQuery } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { funnelParts, stepGoals, type FunnelPartial } from './funnel.js'
import { overlapParts, type OverlapPartial } from './overlap.js'
import { acrossStampsOf, keptPerPartition, sameStamps, stillHolds } from './kept.js'
import { partitionSessions } from './partials.js'
import { Turns, partBits, runAll, runInSlices, type PartedQuery } from './parts.js'
import { U64Map, Words } from '../sketch/index.js'

type OverlapQuery = Extract<PartialQuery, { kind: 'overlap' }>
type FunnelQuery = Extract<PartialQuery, { kind: 'funnel' }>

/** one day's join, with the stamps of the goals' day sets it was computed from */
interface DayJoin {
  stamps: number[]
  counts: number[]
  /** for a recent day, the join per part of the hash space, so a change re-walks its parts only */
  parts?: PartJoins
}

/** a recent day's join by part (RECENT_PART_BITS): each part's counts, as of the day's stamps */
interface PartJoins {
  /** the goals' arrays of part stamps (GoalDays.partStamps): another array means every part changed */
  arrays: Float64Array[]
  /**
   * the newest of the goals' day stamps when joined: stamps only grow, so a part whose stamp in any
   * goal is newer changed since
   */
  joinedAt: number
  /** part p's counts at [p × width …] */
  counts: Int32Array
}

/** a day's join as a parted walk: its query, and the counts so far (a copy) */
type DayParts = (day: number, bits?: number) => { q: PartedQuery<unknown>; counts: () => number[] }

/** joins per query key (two goals, or a funnel's steps and window), then per day: every pair of 64 goals, and more */
const JOINS_PER_PARTITION = 4096

const pairKey = (a: string, b: string): string => (a < b ? `overlap\n${a}\n${b}` : `overlap\n${b}\n${a}`)
const joinCaches = keptPerPartition<Map<number, DayJoin>>(JOINS_PER_PARTITION)

function joinsOf(state: PartitionState, key: string): Map<number, DayJoin> {
  const cache = joinCaches(state)
  let days = cache.get(key)
  if (days === undefined) cache.set(key, (days = new Map()))
  return days
}

const stampsOf = (goals: GoalDays[], day: number): number[] => goals.map((g) => g.dayStamp(day))

/** The window's days on which every goal in `needed` holds a set (a join is empty on the others). */
function joinDays(needed: GoalDays[], from: number, to: number): number[] {
  let days = needed[0].days().filter((d) => d >= from && d <= to)
  for (const g of needed.slice(1)) {
    const held = new Set(g.days())
    days = days.filter((d) => held.has(d))
  }
  return days
}

/**
 * Sums the per-day joins of `days`: stale or missing ones are walked in slices first, then, in one
 * synchronous step, every day is checked and those changed meanwhile walked again at once.
 */
async function sumDays(joins: Map<number, DayJoin>, goals: GoalDays[], days: () => number[], dayParts: DayParts, turns: Turns): Promise<() => number[]> {
  const listed = days()
  // the two newest days mostly change while they are walked: they are walked in the step below
  for (const day of listed.slice(0, -2)) {
    const held = joins.get(day)
    const stamps = stampsOf(goals, day)
    if (held !== undefined && sameStamps(held.stamps, stamps)) continue
    const { q, counts } = dayParts(day)
    await runInSlices(q, turns)
    // the fold may have changed the day during the walk: then it is walked again below
    if (sameStamps(stamps, stampsOf(goals, day))) joins.set(day, { stamps, counts: counts() })
  }
  // ... but their parts changed since they were last joined are brought up to date first, in
  // turns, so that the step below walks only the parts changed meanwhile
  for (const day of listed.slice(-2)) {
    const held = joins.get(day)
    const stamps = stampsOf(goals, day)
    if (held === undefined || sameStamps(held.stamps, stamps) || goals.some((g) => g.partStamps(day) === undefined)) continue
    const steps = rejoinSteps(goals, day, stamps, held, dayParts, true)
    for (let r = steps.next(); ; r = steps.next()) {
      if (r.done === true) {
        joins.set(day, r.value)
        break
      }
      if (turns.due) await turns.next()
    }
  }
  return () => {
    const listed = days()
    for (const day of joins.keys()) if (goals[0].dayStamp(day) === 0) joins.delete(day)
    let sum: number[] | undefined
    for (const day of listed) {
      const stamps = stampsOf(goals, day)
      let held = joins.get(day)
      if (held === undefined || !sameStamps(held.stamps, stamps)) joins.set(day, (held = rejoin(goals, day, stamps, held, dayParts)))
      if (sum === undefined) sum = held.counts.slice()
      else for (let k = 0; k < sum.length; k++) sum[k] += held.counts[k]
    }
    return sum ?? []
  }
}

/**
 * A day's join again, now: a recent day whose parts are stamped (GoalDays.partStamps) walks only
 * the parts changed since `held` was joined — today, asked again, is a few parts, not the day.
 */
function rejoin(goals: GoalDays[], day: number, stamps: number[], held: DayJoin | undefined, dayParts: DayParts): DayJoin {
  if (goals.some((g) => g.partStamps(day) === undefined)) {
    const { q, counts } = dayParts(day)
    runAll(q)
    return { stamps, counts: counts() }
  }
  const steps = rejoinSteps(goals, day, stamps, held, dayParts, false)
  for (;;) {
    const r = steps.next()
    if (r.done === true) return r.value
  }
}

/**
 * The walk of a recent day's changed parts, a part per step: the join of the day as of `stamps`
 * (its goals' day stamps before the first step). Taken across turns of the event loop (`apart`), a
 * part that changes after `stamps` were taken is newer than the join says, so it is walked again
 * next time; and the parts' counts are copied first, since `held` is still the kept join meanwhile
 * (at once, they are taken over: `held` is replaced in the same step).
 */
function* rejoinSteps(goals: GoalDays[], day: number, stamps: number[], held: DayJoin | undefined, dayParts: DayParts, apart: boolean): Generator<void, DayJoin> {
  const arrays = goals.map((g) => g.partStamps(day)!)
  const n = 2 ** RECENT_PART_BITS
  const { q, counts } = dayParts(day, RECENT_PART_BITS)
  let before = counts()
  const width = before.length
  const kept = held?.parts
  const reuse = kept !== undefined && kept.arrays.every((a, k) => a === arrays[k])
  // joined at −1: every part is walked
  const parts: PartJoins = reuse ? (apart ? { ...kept, counts: kept.counts.slice() } : kept) : { arrays, joinedAt: -1, counts: new Int32Array(n * width) }
  const total = reuse ? held!.counts.slice() : new Array<number>(width).fill(0)
  const joinedAt = parts.joinedAt
  for (let p = 0; p < n; p++) {
    let changed = false
    for (let k = 0; k < goals.length && !changed; k++) changed = arrays[k][p] > joinedAt
    if (!changed) continue
    q.step(p)
    const after = counts()
    for (let i = 0; i < width; i++) {
      const part = after[i] - before[i]
      total[i] += part - parts.counts[p * width + i]
      parts.counts[p * width + i] = part
    }
    before = after
    yield
  }
  parts.joinedAt = Math.max(...stamps)
  return { stamps, counts: total, parts }
}

/** How many of `days` lie in [from, to]. */
export function inside(days: ArrayLike<number>, from: number, to: number): number {
  let n = 0
  for (let i = 0; i < days.length; i++) if (days[i] >= from && days[i] <= to) n++
  return n
}

/** One partition's overlap of two goals over a window; `sliceMs`: how long a walk runs before letting other work run. */
export async function overlapByDays(state: PartitionState, q: OverlapQuery, sliceMs?: number): Promise<OverlapPartial> {
  const a = state.goals.get(q.a)
  const b = state.goals.get(q.b)
  const turns = new Turns(sliceMs)
  const { from, to } = q.window
  // a goal with itself, or a goal with no sessions here: the counts say it all
  if (q.a === q.b || a === undefined || b === undefined) {
    const n = a?.conversions(from, to) ?? 0
    return q.a === q.b ? { a: n, b: n, both: n } : { a: n, b: b?.conversions(from, to) ?? 0, both: 0 }
  }
  if (!state.linkedAcross) return runInSlices(overlapParts(state, q), turns)
  // both orders of a pair share their joins (warmPairs fills them for every pair)
  const goals = q.a < q.b ? [a, b] : [b, a]
  const joins = joinsOf(state, pairKey(q.a, q.b))
  const dayParts: DayParts = (day, bits) => {
    const walk = overlapParts(state, { ...q, window: { from: day, to: day } }, [a, b], bits)
    return { q: walk, counts: () => [walk.result().both] }
  }
  const total = await sumDays(joins, goals, () => joinDays(goals, from, to), dayParts, turns)
  // synchronous from here: the days, the corrections and the counts are of one moment
  let both = total()[0] ?? 0
  // a session in both side indexes: the days summed counted it once per day it converted both
  // goals on; the window counts it once if it converted each on some day of it. Those whose days
  // all lie before the two newest are summed apart and kept while those days' stamps hold
  const [small, other] = a.multiDayCount <= b.multiDayCount ? [a, b] : [b, a]
  const settledTo = to - 2
  both += settledPairs(state, pairKey(q.a, q.b), small, other, from, to, settledTo)
  const pair = [small, other]
  for (let j = 0; j < 2; j++) {
    pair[j].forEachIndexedFrom(settledTo + 1, (hi, lo) => {
      if (listedFrom(pair, j, hi, lo, settledTo + 1)) return
      const days = small.indexedDays(hi, lo)
      const others = other.indexedDays(hi, lo)
      if (days !== undefined && others !== undefined) both += pairCorrection(days, others, from, to)
    })
  }
  return { a: a.conversions(from, to), b: b.conversions(from, to), both }
}

/** Whether one of goals[0 … j − 1] holds the session in its side index with a day at or after `day`. */
function listedFrom(goals: GoalDays[], j: number, hi: number, lo: number, day: number): boolean {
  for (let i = 0; i < j; i++) {
    const days = goals[i].indexedDays(hi, lo)
    if (days !== undefined && days[days.length - 1] >= day) return true
  }
  return false
}

/**
 * A session in both goals' side indexes, with its days in each: 1 − the days of [from, to] it
 * converted both on, if it converted each on some day of it (0 otherwise).
 */
function pairCorrection(days: readonly number[], others: readonly number[], from: number, to: number): number {
  if (inside(days, from, to) === 0 || inside(others, from, to) === 0) return 0
  let common = 0
  for (let i = 0, j = 0; i < days.length && j < others.length;) {
    if (days[i] < others[j]) i++
    else if (days[i] > others[j]) j++
    else {
      if (days[i] >= from && days[i] <= to) common++
      i++
      j++
    }
  }
  return 1 - common
}

/**
 * The pair corrections of the sessions whose days in both side indexes all lie up to `settledTo`,
 * kept per pair and window under the side indexes' stamps of those days (acrossStamps): a warm
 * overlap takes only the sessions that reach the newest days.
 */
function settledPairs(state: PartitionState, key: string, small: GoalDays, other: GoalDays, from: number, to: number, settledTo: number): number {
  const stamps = acrossStampsOf(state, from, settledTo)
  const cache = settledPairSums(state)
  const cacheKey = `${key}\n${from}\n${to}`
  const kept = cache.get(cacheKey)
  if (kept !== undefined && stillHolds(state, kept, stamps)) return kept.sum
  let sum = 0
  small.forEachIndexed((hi, lo, days) => {
    if (days[days.length - 1] > settledTo) return
    const others = other.indexedDays(hi, lo)
    if (others !== undefined && others[others.length - 1] <= settledTo) sum += pairCorrection(days, others, from, to)
  })
  cache.set(cacheKey, { stamps, generation: state.acrossGeneration, sum })
  return sum
}

const settledPairSums = keptPerPartition<{ stamps: number[]; generation: number; sum: number }>(JOINS_PER_PARTITION)

/** a funnel's joins are kept by its steps and its time window, whatever the days asked */
const funnelKeyOf = (q: FunnelQuery): string => `funnel\n${q.window_ms}\n${q.steps.join('\n')}`

/** A day's funnel join as a parted walk. */
function funnelDayParts(state: PartitionState, q: FunnelQuery, steps: GoalDays[]): DayParts {
  return (day, bits) => {
    const walk = funnelParts(state, { ...q, window: { from: day, to: day } }, steps, false, bits)
    return { q: walk, counts: () => walk.result().steps.slice() }
  }
}

/**
 * Fills a funnel's per-day joins for the entry step's days but the two newest, where missing or
 * stale, a day at a time: a day held in the store only is read back for its walk alone and let go
 * after (PartitionState.withSettledDay), so warming after a restart never holds the month. A
 * question then walks only the days that change; its correction for sessions on several days reads
 * what each settled day kept of them (GoalDays.evict), or the day when it kept nothing.
 */
export async function warmFunnel(state: PartitionState, q: FunnelQuery, turns = new Turns()): Promise<void> {
  const goals = stepGoals(state, q.steps)
  if (!state.linkedAcross || goals.includes(undefined)) return
  const steps = goals as GoalDays[]
  const joins = joinsOf(state, funnelKeyOf(q))
  const dayParts = funnelDayParts(state, q, steps)
  for (const day of settledDays(steps[0].days(), steps)) {
    const held = joins.get(day)
    if (held !== undefined && sameStamps(held.stamps, stampsOf(steps, day))) continue
    await state.withSettledDay(q.steps, day, async () => {
      const stamps = stampsOf(steps, day)
      const { q: walk, counts } = dayParts(day)
      await runInSlices(walk, turns)
      // the fold may have changed the day during the walk: then a question walks it
      if (sameStamps(stamps, stampsOf(steps, day))) joins.set(day, { stamps, counts: counts() })
    })
  }
}

/** One partition's funnel over a window; `sliceMs` as for overlapByDays. */
export async function funnelByDays(state: PartitionState, q: FunnelQuery, sliceMs?: number): Promise<FunnelPartial> {
  const goals = stepGoals(state, q.steps)
  const turns = new Turns(sliceMs)
  if (!state.linkedAcross) return runInSlices(funnelParts(state, q), turns)
  // a step no session here completed: no session reaches it or any after it
  const missing = goals.indexOf(undefined)
  if (missing >= 0) {
    const reached = missing < 2 ? undefined : await funnelByDays(state, { ...q, steps: q.steps.slice(0, missing) }, sliceMs)
    const steps = new Array<number>(q.steps.length).fill(0)
    if (reached !== undefined) for (let k = 0; k < missing; k++) steps[k] = reached.steps[k]
    else if (missing === 1) steps[0] = goals[0]!.conversions(q.window.from, q.window.to)
    return { total_sessions: reached?.total_sessions ?? partitionSessions(state, q.site_id, q.window), steps }
  }
  const steps = goals as GoalDays[]
  const n = steps.length
  const { from, to } = q.window
  const funnelKey = funnelKeyOf(q)
  const joins = joinsOf(state, funnelKey)
  const dayParts = funnelDayParts(state, q, steps)
  // a session enters on a day with a completion of step 1: the other days add nothing
  const entryDays = () => joinDays([steps[0]], from, to)
  // the sessions on several days, less each of their days' answers. Those whose days all lie
  // before the two newest are summed apart and kept: their sum holds while none of those days
  // changed, in any step's set or any side index (PartitionState.acrossStamps)
  const settled = new SettledSum(state, steps, funnelKey, q, entryDays())
  // a missing sum is taken in turns first (tens of thousands of sessions): kept if nothing it read changed meanwhile
  if (!settled.valid()) await settled.compute(turns)
  const total = await sumDays(joins, steps, entryDays, dayParts, turns)
  // synchronous from here: the days, the corrections and the counts are of one moment
  const out: FunnelPartial = { total_sessions: partitionSessions(state, q.site_id, q.window), steps: total() }
  if (out.steps.length === 0) out.steps = new Array<number>(n).fill(0)
  const kept = settled.valid() ?? settled.computeNow()
  for (let k = 0; k < n; k++) out.steps[k] += kept[k]
  // the rest, whose days reach the two newest: those a step's side index holds with a day after
  // the settled ones (a few days' worth, not the month's)
  const session = new SessionSteps(steps, q.window_ms)
  for (let j = 0; j < n; j++) {
    // a step repeated: its sessions were taken
    if (steps.indexOf(steps[j]) < j) continue
    steps[j].forEachIndexedFrom(settled.to + 1, (hi, lo) => {
      // taken already from an earlier step's index (a lookup, where a set of the seen would be
      // allocated per question, and typed arrays allocated per question bring full collections)
      if (listedFrom(steps, j, hi, lo, settled.to + 1)) return
      const days = steps[0].indexedDays(hi, lo)
      if (days !== undefined && inside(days, from, to) > 0) session.correct(hi, lo, days, from, to, out.steps)
    })
  }
  return out
}

/**
 * The sum of the corrections of a funnel's sessions on several days whose days all lie before the
 * window's two newest ("settled"), kept per window start under the stamps it read.
 */
class SettledSum {
  readonly to: number
  readonly #state: PartitionState
  readonly #steps: GoalDays[]
  readonly #q: FunnelQuery
  readonly #sums: Map<string, { stamps: number[]; generation: number; steps: number[] }>
  readonly #key: string

  /** `entryDays`: the window's days that hold the first step, ascending */
  constructor(state: PartitionState, steps: GoalDays[], funnelKey: string, q: FunnelQuery, entryDays: number[]) {
    this.to = (entryDays[entryDays.length - 1] ?? q.window.to) - 2
    this.#state = state
    this.#steps = steps
    this.#q = q
    this.#sums = settledOf(state, funnelKey)
    this.#key = `${q.window.from}\n${this.to}`
  }

  /** the kept sum, if what it read is unchanged */
  valid(): number[] | undefined {
    const kept = this.#sums.get(this.#key)
    const ok = kept !== undefined && stillHolds(this.#state, kept, this.#stamps())
    return ok ? kept.steps : undefined
  }

  /** Computes the sum in turns; keeps it if nothing it read changed meanwhile. */
  async compute(turns: Turns): Promise<void> {
    const stamps = this.#stamps()
    const generation = this.#state.acrossGeneration
    const sessions: number[] = []
    this.#steps[0].forEachIndexed((hi, lo) => void sessions.push(hi, lo))
    const sum = new Array<number>(this.#steps.length).fill(0)
    const session = new SessionSteps(this.#steps, this.#q.window_ms)
    for (let i = 0; i < sessions.length; i += 2) {
      if (i % 512 === 0 && turns.due) await turns.next()
      this.#add(session, sessions[i], sessions[i + 1], sum)
    }
    if (stillHolds(this.#state, { stamps, generation }, this.#stamps())) this.#sums.set(this.#key, { stamps, generation, steps: sum })
  }

  /** Computes the sum now, and keeps it. */
  computeNow(): number[] {
    const sum = new Array<number>(this.#steps.length).fill(0)
    const session = new SessionSteps(this.#steps, this.#q.window_ms)
    this.#steps[0].forEachIndexed((hi, lo) => this.#add(session, hi, lo, sum))
    this.#sums.set(this.#key, { stamps: this.#stamps(), generation: this.#state.acrossGeneration, steps: sum })
    return sum
  }

  #add(session: SessionSteps, hi: number, lo: number, sum: number[]): void {
    const { from, to } = this.#q.window
    const days = this.#steps[0].indexedDays(hi, lo)
    if (days === undefined || inside(days, from, to) === 0 || lastDay(this.#steps, hi, lo, days) > this.to) return
    session.correct(hi, lo, days, from, to, sum)
  }

  /** what the sum reads: each step's stamp and the side indexes' stamp, per day up to `to` */
  #stamps(): number[] {
    const out: number[] = []
    for (let d = this.#q.window.from; d <= this.to; d++) {
      for (const g of this.#steps) out.push(g.dayStamp(d))
      out.push(this.#state.acrossStamps.get(d) ?? 0)
    }
    return out
  }
}

/** the kept sums of settled sessions on several days, per funnel, then per "from\nsettledTo" */
const settledSums = keptPerPartition<Map<string, { stamps: number[]; generation: number; steps: number[] }>>(JOINS_PER_PARTITION)

function settledOf(state: PartitionState, funnelKey: string): Map<string, { stamps: number[]; generation: number; steps: number[] }> {
  const cache = settledSums(state)
  let sums = cache.get(funnelKey)
  if (sums === undefined) cache.set(funnelKey, (sums = new Map()))
  return sums
}

/** the last day of a session in any step's side index (`days`: its days in the first step's) */
function lastDay(steps: GoalDays[], hi: number, lo: number, days: readonly number[]): number {
  let last = days[days.length - 1]
  for (let k = 1; k < steps.length; k++) {
    const held = steps[k].indexedDays(hi, lo)
    if (held !== undefined && held.length > 0 && held[held.length - 1] > last) last = held[held.length - 1]
  }
  return last
}

/**
 * One session's completions of a funnel's steps over a window, read once — per step, its days and
 * earliest completion on each (from the goals' side indexes: a session on several days is indexed
 * in every goal it converted) — then asked which step it reaches over any days of the window.
 * Reused from session to session: the correction walks tens of thousands of them.
 */
class SessionSteps {
  readonly #steps: GoalDays[]
  readonly #windowMs: number
  /** per step, the session's days of the window and its earliest completion on each: the first #held[k] of them */
  readonly #days: number[][]
  readonly #earliest: number[][]
  readonly #held: number[]
  #hi = 0
  #lo = 0

  constructor(steps: GoalDays[], windowMs: number) {
    this.#steps = steps
    this.#windowMs = windowMs
    this.#days = steps.map(() => [])
    this.#earliest = steps.map(() => [])
    this.#held = steps.map(() => 0)
  }

  read(hi: number, lo: number, from: number, to: number): void {
    this.#hi = hi
    this.#lo = lo
    for (let k = 0; k < this.#steps.length; k++) {
      const days = this.#days[k]
      const earliest = this.#earliest[k]
      // overwritten in place: shortening an array (length = 0) is a slow builtin call
      let n = 0
      const held = this.#steps[k].indexedDays(hi, lo)
      for (let i = 0; held !== undefined && i < held.length; i++) {
        const day = held[i]
        if (day < from || day > to) continue
        const ts = this.#steps[k].earliestOn(hi, lo, day)
        if (ts === undefined) continue
        days[n] = day
        earliest[n] = ts
        n++
      }
      this.#held[k] = n
    }
  }

  /**
   * Adds to `into` the session's answer over [from, to] less its answers over each of its days
   * (`days`: its days of the first step).
   */
  correct(hi: number, lo: number, days: ArrayLike<number>, from: number, to: number, into: number[]): void {
    this.read(hi, lo, from, to)
    const reached = this.reached(from, to)
    for (let k = 0; k <= reached; k++) into[k]++
    for (let i = 0; i < days.length; i++) {
      const day = days[i]
      if (day < from || day > to) continue
      const alone = this.reached(day, day)
      for (let k = 0; k <= alone; k++) into[k]--
    }
  }

  /**
   * The last step the session reaches on days in [from, to] (-1: it never enters), as funnel.ts
   * defines it: it enters at its first completion of step 1 there, and reaches step k at its first
   * completion of step k at or after reaching step k − 1, within the funnel's window of entering.
   */
  reached(from: number, to: number): number {
    const days = this.#days
    const earliest = this.#earliest
    let entered = Infinity
    const held = this.#held
    for (let i = 0; i < held[0]; i++) {
      if (days[0][i] >= from && days[0][i] <= to && earliest[0][i] < entered) entered = earliest[0][i]
    }
    if (entered === Infinity) return -1
    let at = entered
    const until = entered + this.#windowMs
    for (let k = 1; k < days.length; k++) {
      let next = Infinity
      for (let i = 0; i < held[k]; i++) {
        const day = days[k][i]
        if (day < from || day > to) continue
        const ts = this.#steps[k].completionFrom(this.#hi, this.#lo, day, earliest[k][i], at)
        if (ts !== undefined && ts < next && ts <= until) next = ts
      }
      if (next === Infinity) return k - 1
      at = next
    }
    return days.length - 1
  }
}

/** sites with more goals than this get no pairs warmed: their pairs are joined when asked */
export const MAX_WARM_GOALS = 64
/** pairs a partition's warming fills at most, well inside what its cache keeps (JOINS_PER_PARTITION) */
export const MAX_WARM_PAIRS = JOINS_PER_PARTITION / 2

/**
 * Fills the per-day joins of every pair of `goalIds` (at most MAX_WARM_GOALS) for the held days
 * but the two newest, where missing or stale: one walk of a day over all the goals gives every
 * pair's count of the day (a part's sessions each with the set of goals it converted), where
 * asking pair by pair would walk the day once per pair. Afterwards an overlap of any two of the
 * goals walks only the days that change. Runs in `turns`; a day the fold changed meanwhile is
 * left to the next pass.
 */
export async function warmPairs(state: PartitionState, goalIds: readonly string[], turns = new Turns()): Promise<number> {
  const ids = goalIds.filter((id) => state.goals.has(id)).sort()
  if (ids.length < 2 || ids.length > MAX_WARM_GOALS) return 0
  const goals = ids.map((id) => state.goals.get(id)!)
  const held = settledDays([...new Set(goals.flatMap((g) => g.days()))].sort((x, y) => x - y), goals)
  const n = ids.length
  for (const day of held) {
    const stamps = goals.map((g) => g.dayStamp(day))
    let stale = false
    for (let i = 0; i < n && !stale; i++) {
      for (let j = i + 1; j < n && !stale; j++) {
        const kept = joinsOf(state, pairKey(ids[i], ids[j])).get(day)
        stale = kept === undefined || kept.stamps[0] !== stamps[i] || kept.stamps[1] !== stamps[j]
      }
    }
    if (!stale) continue
    // a settled day in the store is read back for this walk alone, and let go after it
    const counts = await state.withSettledDay(ids, day, () => pairCounts(goals, day, turns))
    const now = goals.map((g) => g.dayStamp(day))
    for (let i = 0; i < n; i++) {
      if (now[i] !== stamps[i]) continue
      for (let j = i + 1; j < n; j++) {
        if (now[j] === stamps[j]) joinsOf(state, pairKey(ids[i], ids[j])).set(day, { stamps: [stamps[i], stamps[j]], counts: [counts[i * n + j]] })
      }
    }
  }
  return (n * (n - 1)) / 2
}

/**
 * The days worth warming of `days` (ascending): all but the two newest, which mostly still change
 * (today and yesterday), and those too when a goal holds them in the store: settled, however recent
 * the goals' latest conversions (a goal with none today or yesterday).
 */
function settledDays(days: readonly number[], goals: readonly GoalDays[]): number[] {
  return days.filter((day, i) => i < days.length - 2 || goals.some((g) => g.isStored(day)))
}

/** For every pair i < j of `goals`, the sessions that converted both on `day`, at [i * n + j]. */
async function pairCounts(goals: GoalDays[], day: number, turns: Turns): Promise<Uint32Array> {
  const n = goals.length
  const counts = new Uint32Array(n * n)
  let entries = 0
  for (const g of goals) entries += g.entriesIn(day, day)
  const bits = partBits(entries / 4)
  const sessions = new U64Map((1.5 * entries) / 2 ** bits, bits)
  // per session of the part (its index in `sessions`), the goals it converted: two words of bits
  let masks = new Uint32Array(4096)
  const goalsOf = new Uint8Array(64)
  const words = new Words()
  for (let part = 0; part < 2 ** bits; part++) {
    if (turns.due) await turns.next()
    sessions.clear()
    for (let k = 0; k < n; k++) {
      goals[k].partInto(day, day, part, bits, words)
      const w = words.data
      for (let i = 0; i < words.length; i += 4) {
        let at = sessions.get(w[i], w[i + 1])
        if (at === undefined) {
          at = sessions.size
          sessions.set(w[i], w[i + 1], at)
          if (2 * at + 2 > masks.length) {
            const grown = new Uint32Array(2 * masks.length)
            grown.set(masks)
            masks = grown
          }
          masks[2 * at] = masks[2 * at + 1] = 0
        }
        masks[2 * at + (k >> 5)] |= 1 << (k & 31)
      }
    }
    for (let at = 0; at < sessions.size; at++) {
      // the session's goals, ascending, then each pair of them
      let m = 0
      for (let w = masks[2 * at]; w !== 0; w &= w - 1) goalsOf[m++] = 31 - Math.clz32(w & -w)
      for (let w = masks[2 * at + 1]; w !== 0; w &= w - 1) goalsOf[m++] = 63 - Math.clz32(w & -w)
      for (let x = 0; x < m; x++) for (let y = x + 1; y < m; y++) counts[goalsOf[x] * n + goalsOf[y]]++
    }
  }
  return counts
}
