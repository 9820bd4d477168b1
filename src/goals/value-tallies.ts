/**
 * A goal's conversions of each day, counted by the converted sessions' attribute values (the
 * breakdowns of docs/api.md §9.4): so a breakdown adds up counts instead of reading every
 * converted session's attributes, which for past days lie in the store.
 *
 * Counts are kept per combination of a group of attributes (the groups of the site's value
 * counters: a session has one combination per group), nested Maps keyed by the values. Each
 * converted session of a day is counted once, under its attributes of the moment; when its
 * attributes change, the fold moves it (`move`). These counts are derived, not joins: they are
 * never stored, and a state restored or replayed counts its days again from the day sets and the
 * sessions' attributes, a part of the hash space at a time (stream/tally-values.ts). While a day is
 * being counted, the fold updates only the parts already counted, so every part ends exact.
 *
 * @example
 * const t = new ValueTallies([[0, 1], [2]], false)
 * t.add(day, ['google.com', null, 'DE'], hi, lo)
 * t.sumInto(day, 0, (c) => c[0], counts) // counts: google.com → 1
 */
import { hashPart } from '../sketch/index.js'

type Level = Map<string | null, Level | number>

/** a day being counted again is counted this many parts of the hash space at a time */
export const TALLY_PART_BITS = 6
const PARTS = 2 ** TALLY_PART_BITS

interface DayTally {
  /** per group, its combinations' conversions */
  groups: Level[]
  /** parts of the hash space counted so far, in order (PARTS: the whole day) */
  counted: number
}

export class ValueTallies {
  /**
   * While true, a day the fold begins is not counted by it: the goal's days are being counted
   * from their sets (after a restore, or a replay of the log that adds conversions without
   * attributes), and the count takes that day too.
   */
  rebuilding: boolean
  readonly #groups: readonly (readonly number[])[]
  readonly #days = new Map<number, DayTally>()

  /** `groups`: per group, the indexes of the attribute values its combinations hold */
  constructor(groups: readonly (readonly number[])[], rebuilding: boolean) {
    this.#groups = groups
    this.rebuilding = rebuilding
  }

  /** A session (hash hi, lo) converted on `day`, new to it, with attribute values `values`. */
  add(day: number, values: readonly (string | null)[], hi: number, lo: number): void {
    let t = this.#days.get(day)
    if (t === undefined) {
      if (this.rebuilding) return
      this.#days.set(day, (t = { groups: this.#groups.map((): Level => new Map()), counted: PARTS }))
    }
    if (t.counted < PARTS && hashPart(hi, lo, TALLY_PART_BITS) >= t.counted) return
    for (let g = 0; g < this.#groups.length; g++) bump(t.groups[g], values, this.#groups[g], 1)
  }

  /** A session that converted on `day` changed attributes from `before` to `after`. */
  move(day: number, before: readonly (string | null)[], after: readonly (string | null)[], hi: number, lo: number): void {
    const t = this.#days.get(day)
    if (t === undefined || (t.counted < PARTS && hashPart(hi, lo, TALLY_PART_BITS) >= t.counted)) return
    for (let g = 0; g < this.#groups.length; g++) {
      const dims = this.#groups[g]
      if (dims.every((d) => before[d] === after[d])) continue
      bump(t.groups[g], before, dims, -1)
      bump(t.groups[g], after, dims, 1)
    }
  }

  /** The next part of `day` to count (begun empty if the day has no count yet), or -1: counted. */
  nextPart(day: number): number {
    let t = this.#days.get(day)
    if (t === undefined) this.#days.set(day, (t = { groups: this.#groups.map((): Level => new Map()), counted: 0 }))
    return t.counted < PARTS ? t.counted : -1
  }

  /** Counts a session of the part `nextPart` named; `partCounted` ends the part. */
  countInPart(day: number, values: readonly (string | null)[]): void {
    const t = this.#days.get(day)!
    for (let g = 0; g < this.#groups.length; g++) bump(t.groups[g], values, this.#groups[g], 1)
  }

  partCounted(day: number): void {
    this.#days.get(day)!.counted++
  }

  /** Whether each of `days` is counted whole, and none is being counted again. */
  complete(days: readonly number[]): boolean {
    if (this.rebuilding) return false
    for (const d of days) if (this.#days.get(d)?.counted !== PARTS) return false
    return true
  }

  /**
   * Adds to `into` the day's conversions per value of one attribute: the value a combination of
   * group `g` (whose attribute indexes are `dims`) holds is `valueOf(combination)`.
   */
  sumInto(day: number, g: number, valueOf: (combination: readonly (string | null)[]) => string | null, into: Map<string | null, number>): void {
    const t = this.#days.get(day)
    if (t === undefined) return
    const path: (string | null)[] = []
    const depth = this.#groups[g].length
    const walk = (level: Level, at: number): void => {
      for (const [v, next] of level) {
        path[at] = v
        if (at < depth - 1) walk(next as Level, at + 1)
        else if ((next as number) !== 0) {
          const value = valueOf(path)
          into.set(value, (into.get(value) ?? 0) + (next as number))
        }
      }
    }
    walk(t.groups[g], 0)
  }

  /** Forgets the days before `day` (retention). */
  dropBefore(day: number): void {
    for (const d of this.#days.keys()) if (d < day) this.#days.delete(d)
  }

  /** Forgets a day (its set went). */
  dropDay(day: number): void {
    this.#days.delete(day)
  }

  /** The days with a count, whole or in progress. */
  days(): number[] {
    return [...this.#days.keys()]
  }

  /** ~bytes held: a Map entry per value of each combination level */
  memoryBytes(): number {
    let n = 0
    const walk = (level: Level): void => {
      for (const next of level.values()) {
        n += 64
        if (typeof next !== 'number') walk(next)
      }
    }
    for (const t of this.#days.values()) for (const level of t.groups) walk(level)
    return n
  }
}

/** Adds `by` to the count of the combination (values[at[0]], values[at[1]], …). */
function bump(root: Level, values: readonly (string | null)[], at: readonly number[], by: number): void {
  let level = root
  const last = at.length - 1
  for (let i = 0; i < last; i++) {
    const v = values[at[i]]
    let next = level.get(v) as Level | undefined
    if (next === undefined) level.set(v, (next = new Map()))
    level = next
  }
  const v = values[at[last]]
  level.set(v, ((level.get(v) as number | undefined) ?? 0) + by)
}
