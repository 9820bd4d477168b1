/**
 * A goal's conversions per value of a breakdown's attribute over a window (docs/api.md §9.4), from
 * the counts by value the fold keeps per goal and day (goals/value-tallies.ts).
 */
import type { GoalDays } from '../goals/index.js'
import type { PartialQuery } from '../schema/index.js'
import { BREAKDOWN_DIMENSIONS } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { groupOf, valueInCombination } from '../stream/index.js'
import { U64Map } from '../sketch/index.js'
import { inside } from './day-joins.js'
import { acrossStampsOf, keptPerPartition, stillHolds } from './kept.js'
import type { SummaryLookup } from './partials.js'
import { Turns } from './parts.js'

type BreakdownQuery = Extract<PartialQuery, { kind: 'breakdown' }>

/** stored summaries read per store call */
const COLD_SLICE = 4096
/** the same for the warming pass, which has no one waiting: smaller, so each decode is a short turn */
const SETTLE_SLICE = 1024

/**
 * A goal's conversions per value over the window from its counts per day (ValueTallies), or
 * undefined while they are being counted. A session that converted on k > 1 days of the window is
 * in k days' counts: the goal's side index holds it with its days, and it is taken off k − 1 times
 * under its attributes: the session table's, or, out of memory, those kept (ColdAttributes) or read
 * from the store — the days and the corrections are summed in one synchronous step once every one
 * is at hand (after a read, again), so the answer is the state of one moment.
 */
export async function countedConversions(state: PartitionState, goal: GoalDays, q: BreakdownQuery, d: number, lookup: SummaryLookup): Promise<Map<string | null, number> | undefined> {
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
    const settled = new SettledCorrection(state, q.goal_id, from, settledTo(days, to))
    askedOf(state).set(q.goal_id, ASKED)
    const kept = settled.valid(d)
    const sums = kept ?? new Map<string | null, number>()
    const missing: number[] = []
    const visit = (hi: number, lo: number, held: readonly number[]): void => {
      const isSettled = held[held.length - 1] <= settled.to
      if (isSettled && kept !== undefined) return
      const k = inside(held, from, to)
      if (k < 2) return
      let value: string | null
      const slot = table.slotOf(hi, lo)
      if (slot >= 0) value = table.attributeAt(slot, d)
      else {
        const known = cache.get(hi, lo)
        const at = known === undefined ? read.get(hi, lo) : undefined
        if (known !== undefined) value = known[d]
        else if (at !== undefined) value = readValues[at]
        else {
          missing.push(hi, lo)
          return
        }
      }
      const into = isSettled ? sums : out
      into.set(value, (into.get(value) ?? 0) - (k - 1))
    }
    // the settled ones kept: only those reaching the two newest days are taken
    if (kept !== undefined) goal.forEachIndexedFrom(settled.to + 1, visit)
    else goal.forEachIndexed(visit)
    if (missing.length === 0) {
      if (kept === undefined) settled.keep(d, sums)
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

/** The last day of the settled corrections: before the two newest of the goal's days in the window. */
const settledTo = (days: readonly number[], to: number): number => (days[days.length - 1] ?? to) - 2

/**
 * The corrections of a goal's sessions on several days whose days all lie up to `to` (the two
 * newest of the window's days are after it), per value of each attribute and window start: kept
 * under the stamps of side-index changes and attribute moves of those days
 * (PartitionState.acrossStamps, acrossGeneration), since a warm breakdown would otherwise take
 * every such session of the month again. A question fills in its attribute's; the warming pass
 * (warmSettledCorrections) every attribute's at once.
 */
class SettledCorrection {
  readonly to: number
  readonly #state: PartitionState
  readonly #key: string
  readonly #from: number

  constructor(state: PartitionState, goalId: string, from: number, to: number) {
    this.to = to
    this.#state = state
    this.#from = from
    this.#key = `${goalId}\n${from}\n${to}`
  }

  /** the kept sums of attribute `d`, if still good */
  valid(d: number): Map<string | null, number> | undefined {
    return this.#current()?.sums[d]
  }

  /** whether every attribute's sums are kept and still good */
  complete(): boolean {
    return this.#current()?.sums.every((s) => s !== undefined) ?? false
  }

  keep(d: number, sums: Map<string | null, number>): void {
    const kept = this.#current()
    if (kept !== undefined) kept.sums[d] = sums
    else {
      const all = new Array<Map<string | null, number> | undefined>(BREAKDOWN_DIMENSIONS.length).fill(undefined)
      all[d] = sums
      settledOf(this.#state).set(this.#key, { stamps: this.stamps(), generation: this.#state.acrossGeneration, sums: all })
    }
  }

  /** Keeps every attribute's sums, computed under `stamps` and `generation`, if these still hold. */
  keepAll(sums: Map<string | null, number>[], stamps: number[], generation: number): void {
    const kept = { stamps, generation, sums }
    if (stillHolds(this.#state, kept, this.stamps())) settledOf(this.#state).set(this.#key, kept)
  }

  stamps(): number[] {
    return acrossStampsOf(this.#state, this.#from, this.to)
  }

  #current(): Settled | undefined {
    const kept = settledOf(this.#state).get(this.#key)
    return kept !== undefined && stillHolds(this.#state, kept, this.stamps()) ? kept : undefined
  }
}

interface Settled {
  stamps: number[]
  generation: number
  /** per attribute (its index in BREAKDOWN_DIMENSIONS), the correction per value; undefined: not summed yet */
  sums: (Map<string | null, number> | undefined)[]
}

/** goals × windows a partition keeps */
const SETTLED_KEPT = 1024
/** per partition, the kept corrections (SettledCorrection) */
const settledOf = keptPerPartition<Settled>(SETTLED_KEPT)

/** goals a breakdown was asked of, per partition: the ones the warming pass keeps ready */
const ASKED_KEPT = 64
const askedOf = keptPerPartition<typeof ASKED>(ASKED_KEPT)
const ASKED = {}

/**
 * Sums the settled corrections of every attribute, for the goals a breakdown was asked of lately,
 * in turns of the event loop: a dashboard switching attributes, or asking again after the window
 * moved at midnight, would otherwise take the goal's sessions of the month again per attribute.
 * What folds change meanwhile shows in the stamps: a sum whose days changed while it was taken is
 * not kept (the next pass, or the question, takes it again).
 */
export async function warmSettledCorrections(state: PartitionState, goalIds: readonly string[], w: { from: number; to: number }, lookup: SummaryLookup, turns = new Turns()): Promise<void> {
  const asked = askedOf(state)
  for (const id of goalIds) if (asked.has(id)) await settleAll(state, id, w, lookup, turns)
}

async function settleAll(state: PartitionState, goalId: string, w: { from: number; to: number }, lookup: SummaryLookup, turns: Turns): Promise<void> {
  const goal = state.goals.get(goalId)
  if (goal === undefined) return
  const days = goal.days().filter((day) => day >= w.from && day <= w.to)
  const settled = new SettledCorrection(state, goalId, w.from, settledTo(days, w.to))
  if (settled.complete()) return
  const stamps = settled.stamps()
  const generation = state.acrossGeneration
  // the sessions to take off, [hi, lo, …] and how many times each
  const sessions: number[] = []
  const times: number[] = []
  goal.forEachIndexed((hi, lo, held) => {
    if (held[held.length - 1] > settled.to) return
    const k = inside(held, w.from, w.to)
    if (k < 2) return
    sessions.push(hi, lo)
    times.push(k - 1)
  })
  const sums = BREAKDOWN_DIMENSIONS.map(() => new Map<string | null, number>())
  const take = (values: readonly (string | null)[], n: number): void => {
    for (let d = 0; d < sums.length; d++) sums[d].set(values[d], (sums[d].get(values[d]) ?? 0) - n)
  }
  const table = state.summaries
  const scratch = new Array<string | null>(BREAKDOWN_DIMENSIONS.length)
  const missing: number[] = []
  const missingTimes: number[] = []
  for (let i = 0; i < times.length; i++) {
    if (turns.due) {
      await turns.next()
      if (generation !== state.acrossGeneration || state.goals.get(goalId) !== goal) return
    }
    const hi = sessions[2 * i]
    const lo = sessions[2 * i + 1]
    const slot = table.slotOf(hi, lo)
    const values = slot >= 0 ? table.attributes(slot, scratch) : state.coldAttributes.get(hi, lo)
    if (values !== undefined) take(values, times[i])
    else {
      missing.push(hi, lo)
      missingTimes.push(times[i])
    }
  }
  for (let i = 0; i < missing.length; i += 2 * SETTLE_SLICE) {
    const part = missing.slice(i, i + 2 * SETTLE_SLICE)
    const values = await state.coldAttributes.read(part, (hks) => lookup(state.partition, hks))
    for (let k = 0; k < values.length; k++) take(values[k], missingTimes[i / 2 + k])
    if (turns.due) await turns.next()
  }
  if (state.goals.get(goalId) === goal) settled.keepAll(sums, stamps, generation)
}
