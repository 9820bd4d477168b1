/**
 * A goal's conversions per value of a breakdown's attribute over a window (docs/api.md §9.4), from
 * the counts by value the fold keeps per goal and day (goals/value-tallies.ts).
 */
import type { GoalDays } from '../goals/index.js'
import type { PartialQuery } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { groupOf, valueInCombination } from '../stream/index.js'
import { U64Map } from '../sketch/index.js'
import { inside } from './day-joins.js'
import { keptPerPartition, sameStamps } from './kept.js'
import type { SummaryLookup } from './partials.js'

type BreakdownQuery = Extract<PartialQuery, { kind: 'breakdown' }>

/** stored summaries read per store call */
const COLD_SLICE = 4096

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
    return sameStamps(kept.stamps, this.#stamps()) ? kept.sums : undefined
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

/** goals × attributes × windows a partition keeps */
const SETTLED_KEPT = 1024
/** per partition, the kept corrections (SettledCorrection) */
const settledOf = keptPerPartition<{ stamps: number[]; generation: number; sums: Map<string | null, number> }>(SETTLED_KEPT)
