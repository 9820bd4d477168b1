import { U64Map } from '../sketch/index.js'

/**
 * Most sessions complete a goal once a day, and the day set keeps that one time. Funnels need the
 * first completion *after* a given instant, so a session that completes a goal at several times of
 * a day keeps all of them here (its day-set entry stays the earliest). Times are the day set's
 * (uint32 ms after the day's time base). Adding a time is a set union: replays change nothing.
 */
export const MAX_TIMES_PER_SESSION = 1000

export class CompletionTimes {
  readonly #index = new U64Map()
  readonly #lists: number[][] = []

  get size(): number {
    return this.#lists.length
  }

  /**
   * Records `rel` for a session whose earliest time so far is `earliest` (the day set's, before
   * this completion). Returns true iff the session's times changed.
   */
  add(hi: number, lo: number, earliest: number, rel: number): boolean {
    const at = this.#index.get(hi, lo)
    if (at === undefined) {
      if (rel === earliest) return false
      this.#index.set(hi, lo, this.#lists.length)
      this.#lists.push(rel < earliest ? [rel, earliest] : [earliest, rel])
      return true
    }
    return insertSorted(this.#lists[at], rel)
  }

  /** Every time of a session, ascending, or undefined when it has one only (the day set's). */
  of(hi: number, lo: number): readonly number[] | undefined {
    const at = this.#index.get(hi, lo)
    return at === undefined ? undefined : this.#lists[at]
  }

  forEach(fn: (hi: number, lo: number, times: readonly number[]) => void): void {
    this.#index.forEach((hi, lo, at) => fn(hi, lo, this.#lists[at]))
  }

  /** Joins another set of times into this one (a restore, or a second part of a stored day). */
  merge(other: CompletionTimes): void {
    other.forEach((hi, lo, times) => {
      const at = this.#index.get(hi, lo)
      if (at === undefined) {
        this.#index.set(hi, lo, this.#lists.length)
        this.#lists.push(times.slice())
      } else for (const t of times) insertSorted(this.#lists[at], t)
    })
  }

  memoryBytes(): number {
    let bytes = 64 + this.#index.memoryBytes()
    for (const list of this.#lists) bytes += 32 + 8 * list.length
    return bytes
  }
}

/**
 * Inserts into an ascending list without duplicates; at the cap, only times earlier than its
 * latest still go in (dropping the latest), since funnels ask for the first time after an instant.
 */
function insertSorted(list: number[], t: number): boolean {
  const lo = lowerBound(list, t)
  if (list[lo] === t) return false
  if (list.length >= MAX_TIMES_PER_SESSION) {
    if (lo >= list.length) return false
    list.pop()
  }
  list.splice(lo, 0, t)
  return true
}

/** The first of ascending `times` at or after `t`, or undefined. */
export function firstAtOrAfter(times: readonly number[], t: number): number | undefined {
  return times[lowerBound(times, t)]
}

/** The index of the first of ascending `list` at or after `t` (its length when there is none). */
function lowerBound(list: readonly number[], t: number): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (list[mid] < t) lo = mid + 1
    else hi = mid
  }
  return lo
}
