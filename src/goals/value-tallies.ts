/**
 * A goal's conversions of each day, counted by the converted sessions' attribute values (the
 * breakdowns of docs/api.md §9.4): so a breakdown adds up counts instead of reading every
 * converted session's attributes, which for past days lie in the store.
 *
 * Counts are kept per combination of a group of attributes (the groups of the site's value
 * counters: a session has one combination per group), nested Maps keyed by the values. Each
 * converted session of a day is counted once, under its attributes of the moment; when its
 * attributes change, the fold moves it (`move`). These counts are derived, not joins: a snapshot
 * stores a day only when it matches the day's stored set (`versionOf` with the set's stamp, checked
 * when the snapshot is written), and a state restored without a day's counts, or a goal refilled by
 * a replay, counts them again from the day sets and the sessions' attributes, a part of the hash
 * space at a time (stream/tally-values.ts). While a day is being counted, the fold updates only the
 * parts already counted, so every part ends exact.
 *
 * @example
 * const t = new ValueTallies([[0, 1], [2]], false)
 * t.add(day, ['google.com', null, 'DE'], hi, lo)
 * t.sumInto(day, 0, 0, (c) => c[0], counts) // counts: google.com → 1
 */
import { hashKey, hashPart } from '../sketch/index.js'

type Level = Map<string | null, Level | number>

/** a day being counted again is counted this many parts of the hash space at a time */
export const TALLY_PART_BITS = 6
const PARTS = 2 ** TALLY_PART_BITS

interface DayTally {
  /** per group, its combinations' conversions */
  groups: Level[]
  /** parts of the hash space counted so far, in order (PARTS: the whole day) */
  counted: number
  /** bumped at every change: a snapshot writes the day only if it did not change while it was written */
  version: number
  /** per attribute, its values' sums as of a version (sumInto) */
  sums?: Map<number, { version: number; values: Map<string | null, number> }>
}

/** a day's counts as stored: per group, [combination, conversions] */
interface StoredDay {
  v: 1
  groups: [(string | null)[], number][][]
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
  /** per day, the sessions counted without values (`countBlankInPart`), by hash key */
  readonly #blank = new Map<number, Set<string>>()
  /** no value for any attribute: what a blank session is counted under */
  readonly #none: readonly null[]
  /** days changed since a snapshot last took them */
  #dirty = new Set<number>()

  /** `groups`: per group, the indexes of the attribute values its combinations hold */
  constructor(groups: readonly (readonly number[])[], rebuilding: boolean) {
    this.#groups = groups
    this.rebuilding = rebuilding
    this.#none = new Array<null>(Math.max(-1, ...groups.flat()) + 1).fill(null)
  }

  /** A session (hash hi, lo) converted on `day`, new to it, with attribute values `values`. */
  add(day: number, values: readonly (string | null)[], hi: number, lo: number): void {
    let t = this.#days.get(day)
    if (t === undefined) {
      if (this.rebuilding) return
      this.#days.set(day, (t = this.#newDay(PARTS)))
    }
    if (uncounted(t, hi, lo)) return
    for (let g = 0; g < this.#groups.length; g++) bump(t.groups[g], values, this.#groups[g], 1)
    this.#changed(day, t)
  }

  /** A session that converted on `day` changed attributes from `before` to `after`. */
  move(day: number, before: readonly (string | null)[], after: readonly (string | null)[], hi: number, lo: number): void {
    const t = this.#days.get(day)
    if (t === undefined || uncounted(t, hi, lo)) return
    // counted without values until its conversion is folded again (`fillBlank`), not under `before`
    if (this.#blank.size > 0 && this.#blank.get(day)?.has(hashKey(hi, lo))) return
    for (let g = 0; g < this.#groups.length; g++) {
      const dims = this.#groups[g]
      if (dims.every((d) => before[d] === after[d])) continue
      bump(t.groups[g], before, dims, -1)
      bump(t.groups[g], after, dims, 1)
    }
    this.#changed(day, t)
  }

  /** The next part of `day` to count (begun empty if the day has no count yet), or -1: counted. */
  nextPart(day: number): number {
    let t = this.#days.get(day)
    if (t === undefined) this.#days.set(day, (t = this.#newDay(0)))
    return t.counted < PARTS ? t.counted : -1
  }

  /** Counts a session of the part `nextPart` named; `partCounted` ends the part. */
  countInPart(day: number, values: readonly (string | null)[]): void {
    const t = this.#days.get(day)!
    for (let g = 0; g < this.#groups.length; g++) bump(t.groups[g], values, this.#groups[g], 1)
    this.#changed(day, t)
  }

  /**
   * Counts a session of the part without values: its day's set holds it but no summary of it was
   * stored yet (a snapshot wrote the set with a conversion that came in while it was written, and
   * the session's summary goes with the next one). Its events come again from the log, after the
   * restored offset; `fillBlank` then moves it to its values, and until then moves leave it alone.
   */
  countBlankInPart(day: number, hi: number, lo: number): void {
    this.countInPart(day, this.#none)
    let sessions = this.#blank.get(day)
    if (sessions === undefined) this.#blank.set(day, (sessions = new Set()))
    sessions.add(hashKey(hi, lo))
  }

  /** whether some session is counted without values (`countBlankInPart`) */
  get hasBlank(): boolean {
    return this.#blank.size > 0
  }

  /**
   * A conversion on `day` folded again for a session already in the day's set: if it was counted
   * without values (`countBlankInPart`), it moves to `values` now.
   */
  fillBlank(day: number, values: readonly (string | null)[], hi: number, lo: number): void {
    const sessions = this.#blank.get(day)
    if (sessions === undefined || !sessions.delete(hashKey(hi, lo))) return
    if (sessions.size === 0) this.#blank.delete(day)
    this.move(day, this.#none, values, hi, lo)
  }

  partCounted(day: number): void {
    const t = this.#days.get(day)!
    t.counted++
    this.#changed(day, t)
  }

  #changed(day: number, t: DayTally): void {
    t.version++
    this.#dirty.add(day)
  }

  /** The days changed since the last call. */
  takeDirty(): Set<number> {
    const d = this.#dirty
    this.#dirty = new Set()
    return d
  }

  /** A day to be written by the next snapshot. */
  markDirty(day: number): void {
    this.#dirty.add(day)
  }

  /**
   * The day's version when it is counted whole, else undefined — also while a session of it is
   * counted without values: stored so, a restore would not know to move it when its events come again.
   */
  versionOf(day: number): number | undefined {
    const t = this.#days.get(day)
    return t?.counted === PARTS && !this.#blank.has(day) ? t.version : undefined
  }

  /** A day counted whole, as stored (JSON). */
  encodeDay(day: number): string {
    const t = this.#days.get(day)!
    const groups = t.groups.map((level, g) => {
      const out: [(string | null)[], number][] = []
      eachCount(level, this.#groups[g].length, (combination, n) => void out.push([combination.slice(), n]))
      return out
    })
    return JSON.stringify({ v: 1, groups } satisfies StoredDay)
  }

  /** Puts back a day as `encodeDay` stored it, counted whole; false if it is not of this layout. */
  restoreDay(day: number, stored: string): boolean {
    const parsed = JSON.parse(stored) as StoredDay
    if (parsed.v !== 1 || parsed.groups.length !== this.#groups.length) return false
    const t = this.#newDay(PARTS)
    for (let g = 0; g < parsed.groups.length; g++) {
      const at = this.#groups[g].map((_, i) => i)
      for (const [combination, n] of parsed.groups[g]) {
        if (combination.length !== at.length) return false
        bump(t.groups[g], combination, at, n)
      }
    }
    this.#days.set(day, t)
    return true
  }

  /** Whether each of `days` is counted whole, and none is being counted again. */
  complete(days: readonly number[]): boolean {
    if (this.rebuilding) return false
    for (const d of days) if (this.#days.get(d)?.counted !== PARTS) return false
    return true
  }

  /**
   * Adds to `into` the day's conversions per value of one attribute (`key` names it): the value a
   * combination of group `g` holds is `valueOf(combination)`. A day's sums are kept per attribute
   * until the day changes.
   */
  sumInto(day: number, key: number, g: number, valueOf: (combination: readonly (string | null)[]) => string | null, into: Map<string | null, number>): void {
    const t = this.#days.get(day)
    if (t === undefined) return
    let sums = t.sums?.get(key)
    if (sums === undefined || sums.version !== t.version) {
      sums = { version: t.version, values: new Map() }
      this.#sum(t, g, valueOf, sums.values)
      ;(t.sums ??= new Map()).set(key, sums)
    }
    for (const [value, n] of sums.values) into.set(value, (into.get(value) ?? 0) + n)
  }

  #sum(t: DayTally, g: number, valueOf: (combination: readonly (string | null)[]) => string | null, into: Map<string | null, number>): void {
    eachCount(t.groups[g], this.#groups[g].length, (combination, n) => {
      const value = valueOf(combination)
      into.set(value, (into.get(value) ?? 0) + n)
    })
  }

  #newDay(counted: number): DayTally {
    return { groups: this.#groups.map((): Level => new Map()), counted, version: 0 }
  }

  /** Forgets the days before `day` (retention). */
  dropBefore(day: number): void {
    for (const d of this.#days.keys()) if (d < day) this.#days.delete(d)
    for (const d of this.#blank.keys()) if (d < day) this.#blank.delete(d)
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

/** Whether the session lies in a part of the day not counted yet (the count of its set takes it then). */
function uncounted(t: DayTally, hi: number, lo: number): boolean {
  return t.counted < PARTS && hashPart(hi, lo, TALLY_PART_BITS) >= t.counted
}

/** Calls `fn` with every combination (a path reused from call to call) of `depth` values and its count, but zeros. */
function eachCount(root: Level, depth: number, fn: (combination: readonly (string | null)[], n: number) => void): void {
  const path: (string | null)[] = []
  const walk = (level: Level, at: number): void => {
    for (const [v, next] of level) {
      path[at] = v
      if (at < depth - 1) walk(next as Level, at + 1)
      else if ((next as number) !== 0) fn(path, next as number)
    }
  }
  walk(root, 0)
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
