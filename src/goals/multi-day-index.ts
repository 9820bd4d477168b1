import { U64Map } from '../sketch/index.js'

export interface MultiDayEntry {
  hi: number
  lo: number
  /** ascending, at least one */
  days: number[]
}

/**
 * The sessions of one goal that converted on more than one day, with those days — and the
 * sessions that converted it on one day but completed other goals of the site on other days
 * (one day each: the joins of overlap and funnels need every goal's days of such a session, see
 * query/day-joins.ts). Few sessions convert on several days, but at a busy site's scale a goal still holds millions of them, so they
 * live in typed arrays rather than an object each (a JavaScript array per session made this index
 * most of the heap, and its full garbage collections the longest pauses): each session's days
 * are a run in one pool, and a session that gains a day gets a new run at the pool's end, the old
 * one left behind until the pool is compacted. Removal happens only on retention, by rebuilding.
 */
export class MultiDayIndex {
  #where = new U64Map()
  #his = new Uint32Array(16)
  #los = new Uint32Array(16)
  /** where each session's days start in the pool, and how many */
  #starts = new Uint32Array(16)
  #lengths = new Uint16Array(16)
  #n = 0
  #pool = new Uint32Array(64)
  #poolUsed = 0
  #version = 0
  #cached = { version: -1, from: 0, to: 0, value: 0 }
  /**
   * How many sessions share each set of days. Windows only ask "how many of your days are inside",
   * and sessions crowd onto few sets (mostly two neighbouring days), so a window's overcount costs
   * the number of distinct sets, not of sessions (measured: 1.5M sessions took 32 ms per window).
   */
  #bySet = new Map<string, { days: number[]; count: number }>()
  readonly #eachDays: number[][] = []
  readonly #viewDays: number[][] = []
  /**
   * Entries by their last day, so a query can take the sessions that reach the newest days without
   * walking the month's: an entry is listed under every last day it had (days are only ever
   * added, so a last day only grows), and counts under its current one only.
   */
  #byLast = new Map<number, EntryList>()

  get size(): number {
    return this.#n
  }

  get version(): number {
    return this.#version
  }

  /** Adds `day` to an indexed session; false when the session is not indexed. */
  addDay(hi: number, lo: number, day: number): boolean {
    const at = this.#where.get(hi, lo)
    if (at === undefined) return false
    const days = this.#daysAt(at)
    let i = days.length
    while (i > 0 && days[i - 1] > day) i--
    if (days[i - 1] !== day) {
      const next = [...days.subarray(0, i), day, ...days.subarray(i)]
      this.#count(days, -1)
      this.#setDays(at, next)
      this.#count(next, 1)
      this.#version++
    }
    return true
  }

  /** Indexes a session with its days (joined to the days it has, if indexed); false when nothing changed. */
  add(hi: number, lo: number, days: readonly number[]): boolean {
    const unique = [...new Set(days)].sort((a, b) => a - b)
    if (unique.length === 0) return false
    const at = this.#where.get(hi, lo)
    if (at !== undefined) {
      const held = this.#daysAt(at)
      const merged = [...new Set([...held, ...unique])].sort((a, b) => a - b)
      if (merged.length === held.length) return false
      this.#count(held, -1)
      this.#setDays(at, merged)
      this.#count(merged, 1)
    } else {
      const i = this.#n
      if (i === this.#his.length) this.#growEntries()
      this.#where.set(hi, lo, i)
      this.#his[i] = hi
      this.#los[i] = lo
      this.#n++
      this.#setDays(i, unique)
      this.#count(unique, 1)
    }
    this.#version++
    return true
  }

  #count(days: ArrayLike<number>, delta: number): void {
    const key = Array.prototype.join.call(days, ',')
    const entry = this.#bySet.get(key)
    if (entry) {
      entry.count += delta
      if (entry.count === 0) this.#bySet.delete(key)
    } else if (delta > 0) this.#bySet.set(key, { days: Array.from(days), count: delta })
  }

  /**
   * Σ over indexed sessions of (their days inside [from, to]) − 1, where positive. The last answer
   * is kept until the index changes: dashboards ask for the same window over and over.
   */
  overcount(from: number, to: number): number {
    const c = this.#cached
    if (c.version === this.#version && c.from === from && c.to === to) return c.value
    let extra = 0
    for (const { days, count } of this.#bySet.values()) {
      let inside = 0
      for (const d of days) if (d >= from && d <= to) inside++
      if (inside > 1) extra += (inside - 1) * count
    }
    this.#cached = { version: this.#version, from, to, value: extra }
    return extra
  }

  /**
   * A predicate telling whether an entry (session, day) is a repeat: the session is indexed and
   * `day` is not its earliest day inside [from, to].
   */
  laterDaysFilter(from: number, to: number): (hi: number, lo: number, day: number) => boolean {
    if (this.#n === 0) return () => false
    const first = new Float64Array(this.#n).fill(NaN)
    for (let i = 0; i < this.#n; i++) {
      const start = this.#starts[i]
      const end = start + this.#lengths[i]
      for (let k = start; k < end; k++) {
        const d = this.#pool[k]
        if (d >= from && d <= to) {
          first[i] = d
          break
        }
      }
    }
    return (hi, lo, day) => {
      const at = this.#where.get(hi, lo)
      return at !== undefined && at < first.length && first[at] !== day
    }
  }

  /** Calls `fn` with every indexed session and its days (valid during the call only). */
  forEach(fn: (hi: number, lo: number, days: readonly number[]) => void): void {
    const days = this.#eachDays
    for (let i = 0; i < this.#n; i++) fn(this.#his[i], this.#los[i], this.#copyDays(i, days))
  }

  /** Calls `fn` with every indexed session whose last day is `day` or later, and its days (valid during the call only). */
  forEachEndingFrom(day: number, fn: (hi: number, lo: number, days: readonly number[]) => void): void {
    const days = this.#eachDays
    for (const [last, list] of this.#byLast) {
      if (last < day) continue
      for (let k = 0; k < list.n; k++) {
        const i = list.at[k]
        // listed here before it gained a later day: it counts under that one
        if (this.#lastDay(i) !== last) continue
        fn(this.#his[i], this.#los[i], this.#copyDays(i, days))
      }
    }
  }

  /** Calls `fn` with every indexed session that has `day` among its days and whose last day is at most `until`. */
  forEachOn(day: number, until: number, fn: (hi: number, lo: number) => void): void {
    const pool = this.#pool
    for (const [last, list] of this.#byLast) {
      if (last < day || last > until) continue
      for (let k = 0; k < list.n; k++) {
        const i = list.at[k]
        const start = this.#starts[i]
        const n = this.#lengths[i]
        // listed here before it gained a later day (it counts under that one), or begins after the day
        if (this.#lastDay(i) !== last || pool[start] > day) continue
        for (let j = 0; j < n; j++) {
          if (pool[start + j] !== day) continue
          fn(this.#his[i], this.#los[i])
          break
        }
      }
    }
  }

  /** the days of an indexed session, ascending, valid until the next call; undefined when it is not indexed */
  daysView(hi: number, lo: number): readonly number[] | undefined {
    const at = this.#where.get(hi, lo)
    return at === undefined ? undefined : this.#copyDays(at, this.#viewDays)
  }

  /** the held days of an indexed session, ascending; undefined when it is not indexed */
  daysOf(hi: number, lo: number): readonly number[] | undefined {
    const at = this.#where.get(hi, lo)
    return at === undefined ? undefined : Array.from(this.#daysAt(at))
  }

  dropBefore(day: number): void {
    const kept = this.entries()
      .map((e) => ({ ...e, days: e.days.filter((d) => d >= day) }))
      .filter((e) => e.days.length > 0)
    const changed = kept.length !== this.size || kept.some((e, i) => e.days.length !== this.#lengths[i])
    if (changed) this.load(kept)
  }

  clear(): void {
    if (this.size > 0) this.load([])
  }

  entries(): MultiDayEntry[] {
    const out = new Array<MultiDayEntry>(this.#n)
    for (let i = 0; i < this.#n; i++) out[i] = { hi: this.#his[i], lo: this.#los[i], days: Array.from(this.#daysAt(i)) }
    return out
  }

  /** Replaces the whole index. */
  load(entries: readonly MultiDayEntry[]): void {
    const n = Math.max(16, entries.length)
    this.#where = new U64Map(entries.length)
    this.#bySet = new Map()
    this.#byLast = new Map()
    this.#his = new Uint32Array(n)
    this.#los = new Uint32Array(n)
    this.#starts = new Uint32Array(n)
    this.#lengths = new Uint16Array(n)
    this.#n = 0
    this.#pool = new Uint32Array(Math.max(64, 2 * entries.length + 16))
    this.#poolUsed = 0
    for (const e of entries) this.add(e.hi, e.lo, e.days)
    this.#version++
  }

  memoryBytes(): number {
    let bytes = 256 + this.#where.memoryBytes() + this.#his.byteLength + this.#los.byteLength + this.#starts.byteLength + this.#lengths.byteLength + this.#pool.byteLength
    for (const { days } of this.#bySet.values()) bytes += 96 + 16 * days.length
    for (const list of this.#byLast.values()) bytes += 96 + list.at.byteLength
    return bytes
  }

  /**
   * Session i's days copied into an array kept for their number, of one of two sets (forEach's
   * and daysView's, so a view may be taken inside a walk): a walk over tens of thousands of sessions, as overlap,
   * funnels and breakdowns make, then allocates nothing (a typed-array view each made a query's
   * garbage, and its collections a good part of the query's time).
   */
  #copyDays(i: number, byLength: number[][]): number[] {
    const start = this.#starts[i]
    const n = this.#lengths[i]
    // one array per length, overwritten: setting an array's length is a slow builtin call
    let out = byLength[n]
    if (out === undefined) {
      byLength[n] = out = []
      for (let k = 0; k < n; k++) out.push(0)
    }
    for (let k = 0; k < n; k++) out[k] = this.#pool[start + k]
    return out
  }

  #daysAt(i: number): Uint32Array {
    const start = this.#starts[i]
    return this.#pool.subarray(start, start + this.#lengths[i])
  }

  /** The last day of entry `i`; undefined for an entry not given days yet. */
  #lastDay(i: number): number | undefined {
    return this.#lengths[i] === 0 ? undefined : this.#pool[this.#starts[i] + this.#lengths[i] - 1]
  }

  /** Gives entry `i` a new run of days at the pool's end. */
  #setDays(i: number, days: readonly number[]): void {
    const last = days[days.length - 1]
    if (this.#lastDay(i) !== last) {
      let list = this.#byLast.get(last)
      if (list === undefined) this.#byLast.set(last, (list = { at: new Uint32Array(16), n: 0 }))
      if (list.n === list.at.length) {
        const grown = new Uint32Array(2 * list.n)
        grown.set(list.at)
        list.at = grown
      }
      list.at[list.n++] = i
    }
    if (this.#poolUsed + days.length > this.#pool.length) this.#growPool(days.length)
    this.#starts[i] = this.#poolUsed
    this.#lengths[i] = days.length
    this.#pool.set(days, this.#poolUsed)
    this.#poolUsed += days.length
  }

  #growEntries(): void {
    const grow = <T extends Uint32Array | Uint16Array>(a: T, make: (n: number) => T): T => {
      const b = make(a.length * 2)
      b.set(a)
      return b
    }
    this.#his = grow(this.#his, (n) => new Uint32Array(n))
    this.#los = grow(this.#los, (n) => new Uint32Array(n))
    this.#starts = grow(this.#starts, (n) => new Uint32Array(n))
    this.#lengths = grow(this.#lengths, (n) => new Uint16Array(n))
  }

  /** Room for `more` words: the sessions' runs copied into a pool of twice what they and `more` need. */
  #growPool(more: number): void {
    let live = 0
    for (let i = 0; i < this.#n; i++) live += this.#lengths[i]
    const size = Math.max(64, 2 * (live + more))
    const pool = new Uint32Array(size)
    let used = 0
    for (let i = 0; i < this.#n; i++) {
      const start = this.#starts[i]
      const len = this.#lengths[i]
      pool.set(this.#pool.subarray(start, start + len), used)
      this.#starts[i] = used
      used += len
    }
    this.#pool = pool
    this.#poolUsed = used
  }
}

/** entry numbers, growing */
interface EntryList {
  at: Uint32Array
  n: number
}
