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
  /**
   * Each session's times are a run in one pool with room to grow, rather than an array each (an
   * object per session on the heap is what long garbage collections are made of): where its run
   * starts, how many times it holds and how many it has room for. A full run moves to the pool's
   * end with twice the room; what it leaves behind is reclaimed when the pool grows.
   */
  #starts = new Uint32Array(16)
  #lengths = new Uint16Array(16)
  #rooms = new Uint16Array(16)
  #n = 0
  #pool = new Uint32Array(64)
  #poolUsed = 0

  get size(): number {
    return this.#n
  }

  /**
   * Records `rel` for a session whose earliest time so far is `earliest` (the day set's, before
   * this completion). Returns true iff the session's times changed.
   */
  add(hi: number, lo: number, earliest: number, rel: number): boolean {
    const at = this.#index.get(hi, lo)
    if (at === undefined) {
      if (rel === earliest) return false
      const i = this.#newSession(hi, lo)
      this.#insert(i, Math.min(rel, earliest))
      this.#insert(i, Math.max(rel, earliest))
      return true
    }
    return this.#insert(at, rel)
  }

  /** Every time of a session, ascending (a view: read it before the next change), or undefined when it has one only (the day set's). */
  of(hi: number, lo: number): Uint32Array | undefined {
    const at = this.#index.get(hi, lo)
    return at === undefined ? undefined : this.#timesAt(at)
  }

  forEach(fn: (hi: number, lo: number, times: Uint32Array) => void): void {
    this.#index.forEach((hi, lo, at) => fn(hi, lo, this.#timesAt(at)))
  }

  /** A new set holding the times of the given sessions ([hi, lo, …]) that this one holds, for a snapshot's delta. */
  pick(sessions: readonly number[]): CompletionTimes {
    const out = new CompletionTimes()
    for (let k = 0; k < sessions.length; k += 2) {
      const hi = sessions[k]
      const lo = sessions[k + 1]
      const times = this.of(hi, lo)
      if (times === undefined || out.#index.get(hi, lo) !== undefined) continue
      const i = out.#newSession(hi, lo)
      for (const t of times) out.#insert(i, t)
    }
    return out
  }

  /** Joins another set of times into this one (a restore, or a second part of a stored day). */
  merge(other: CompletionTimes): void {
    other.forEach((hi, lo, times) => {
      const i = this.#index.get(hi, lo) ?? this.#newSession(hi, lo)
      for (const t of times) this.#insert(i, t)
    })
  }

  memoryBytes(): number {
    return 64 + this.#index.memoryBytes() + this.#starts.byteLength + this.#lengths.byteLength + this.#rooms.byteLength + this.#pool.byteLength
  }

  #timesAt(i: number): Uint32Array {
    const start = this.#starts[i]
    return this.#pool.subarray(start, start + this.#lengths[i])
  }

  #newSession(hi: number, lo: number): number {
    const i = this.#n++
    if (i === this.#starts.length) {
      this.#starts = grown(this.#starts, new Uint32Array(2 * i))
      this.#lengths = grown(this.#lengths, new Uint16Array(2 * i))
      this.#rooms = grown(this.#rooms, new Uint16Array(2 * i))
    }
    this.#index.set(hi, lo, i)
    this.#starts[i] = this.#reserve(2)
    this.#lengths[i] = 0
    this.#rooms[i] = 2
    return i
  }

  /**
   * Inserts into session i's ascending times without duplicates; at the cap, only times earlier
   * than its latest still go in (dropping the latest), since funnels ask for the first time after
   * an instant.
   */
  #insert(i: number, t: number): boolean {
    // on the pool by index: a view of the run would be an object per completion
    let n = this.#lengths[i]
    const from = this.#starts[i]
    const at = lowerBoundIn(this.#pool, from, from + n, t) - from
    if (at < n && this.#pool[from + at] === t) return false
    if (n >= MAX_TIMES_PER_SESSION) {
      if (at >= n) return false
      n--
    } else if (n === this.#rooms[i]) {
      const room = Math.min(MAX_TIMES_PER_SESSION, 2 * n)
      const start = this.#reserve(room)
      this.#pool.copyWithin(start, this.#starts[i], this.#starts[i] + n)
      this.#starts[i] = start
      this.#rooms[i] = room
    }
    const start = this.#starts[i]
    this.#pool.copyWithin(start + at + 1, start + at, start + n)
    this.#pool[start + at] = t
    this.#lengths[i] = n + 1
    return true
  }

  /** `words` of room at the pool's end, compacting or growing the pool when it is full. */
  #reserve(words: number): number {
    if (this.#poolUsed + words > this.#pool.length) {
      let live = words
      for (let i = 0; i < this.#n; i++) live += this.#rooms[i]
      const pool = new Uint32Array(Math.max(64, 2 * live))
      let used = 0
      for (let i = 0; i < this.#n; i++) {
        const start = this.#starts[i]
        pool.set(this.#pool.subarray(start, start + this.#lengths[i]), used)
        this.#starts[i] = used
        used += this.#rooms[i]
      }
      this.#pool = pool
      this.#poolUsed = used
    }
    const start = this.#poolUsed
    this.#poolUsed += words
    return start
  }
}

function grown<T extends Uint32Array | Uint16Array>(from: T, to: T): T {
  to.set(from)
  return to
}

/** The first of ascending `times` at or after `t`, or undefined. */
export function firstAtOrAfter(times: ArrayLike<number>, t: number): number | undefined {
  return times[lowerBound(times, t)]
}

/** The index of the first of ascending `list` at or after `t` (its length when there is none). */
function lowerBound(list: ArrayLike<number>, t: number): number {
  return lowerBoundIn(list, 0, list.length, t)
}

/** `lowerBound` within `list[from, to)`: an index from `from` to `to` */
function lowerBoundIn(list: ArrayLike<number>, from: number, to: number, t: number): number {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (list[mid] < t) lo = mid + 1
    else hi = mid
  }
  return lo
}
