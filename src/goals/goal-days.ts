import { U64Map, hashPart, type Words } from '../sketch/index.js'
import { DAY_MS, dayOfHourKey } from './calendar.js'
import { MultiDayIndex, type MultiDayEntry } from './multi-day-index.js'
import { CompletionTimes, firstAtOrAfter } from './completion-times.js'

/**
 * Times are stored as uint32 ms after `day * DAY_MS − 14 h`. A local day starts no earlier than
 * 14 h before its UTC namesake (UTC+14) and ends no later than 12 h after it (UTC−12), whatever
 * DST does in between, so every instant of any zone's day lies in [base, base + 50 h) — well
 * inside a uint32 — and that bound lets `candidates` skip whole days.
 */
const TIME_BASE_SHIFT_MS = 14 * 3_600_000
const DAY_SPAN_MS = 50 * 3_600_000

export const dayTimeBase = (day: number): number => day * DAY_MS - TIME_BASE_SHIFT_MS

/**
 * An instant as a day's sets hold it: whole ms after `dayTimeBase(day)`. Under 2^31 for any instant
 * of the day, so the fold hands it on as a small integer, where an epoch time in ms handed to a
 * call is a number object made for it.
 */
export const dayTime = (ts: number, day: number): number => Math.floor(ts - (day * DAY_MS - TIME_BASE_SHIFT_MS))

/** stamps of day changes, shared by every goal: a day removed and made again never gets an old stamp */
let lastStamp = 0
/** the days found holding a session newly recorded (reused: the fold records millions) */
const heldScratch: number[] = []

/**
 * The parts of the hash space (hashPart) a recent day's changes are also stamped by: a cached join
 * of today walks again only the parts that changed since (query/day-joins.ts).
 */
export const RECENT_PART_BITS = 10

/**
 * Thrown by a read of a goal's settled day whose set is in the store only (GoalDays.evict): the
 * caller reads those days back (stream/settled-days.ts) and asks again. Nothing was changed by the
 * read that threw.
 */
export class DaysNotLoaded extends Error {
  override name = 'DaysNotLoaded'

  constructor(readonly goal: GoalDays, readonly days: readonly number[]) {
    super(`the sets of days ${days.join(', ')} are in the store only`)
  }
}

/** a settled day keeps what funnels read of the sessions on several days ending within this many days after it */
const KEPT_SPAN_DAYS = 7

export interface Candidate {
  hi: number
  lo: number
  /** epoch ms of the session's first completion inside the window */
  ts: number
}

/**
 * The conversions of one goal: per local day, the converted sessions (64-bit hashes) with their
 * first completion time that day, plus a side index of the few sessions that converted on more
 * than one day. Window counts then cost O(days + multi-day sessions), never O(sessions)
 * (docs/architecture.md, "Queries merge, never scan"). Every update is a join, so replays change nothing.
 */
export class GoalDays {
  readonly #days = new Map<number, U64Map>()
  /**
   * the settled days whose set left memory for the store (evict), with their sizes: counts read
   * them here, and a read of their sessions throws DaysNotLoaded until they are loaded again
   */
  readonly #stored = new Map<number, number>()
  /**
   * per day held in the store only, what a funnel's correction reads of the sessions on several
   * days: each session the side index listed on the day when it left memory (ending within
   * KEPT_SPAN_DAYS of it), with its earliest completion that day and its further times. A stored
   * day cannot change, so these stay true until it is loaded again; a session not among them
   * (indexed later, or spanning longer) is read from the store.
   */
  readonly #residue = new Map<number, { earliest: U64Map; times: CompletionTimes | undefined }>()
  #sorted: number[] | undefined = []
  readonly #multi = new MultiDayIndex()
  #size = 0
  /** per hour of the recent days (`hourKey`), the sessions that completed the goal in it */
  readonly #hours = new Map<number, U64Map>()
  /** per day, every completion time of the sessions that completed the goal more than once that day */
  readonly #times = new Map<number, CompletionTimes>()
  /** per day, a stamp taken at its last change (its set or its times): what a cached result of the day was computed from */
  readonly #stamps = new Map<number, number>()
  /**
   * for the two newest days, a stamp per part of the hash space at its last change; a new array
   * (a new object) whenever the day changed in a way not stamped by part (restored, merged)
   */
  readonly #partStamps = new Map<number, Float64Array>()
  #newest = -Infinity

  /** entries over all days */
  get size(): number {
    return this.#size
  }

  /** sessions that converted on more than one held day */
  get multiDayCount(): number {
    return this.#multi.size
  }

  /** bumps whenever the side index changes, so a snapshot knows to rewrite it */
  get multiDayVersion(): number {
    return this.#multi.version
  }

  /**
   * Records a completion at `ts` (epoch ms) on local `day`. `spanDays`, the days of the session's
   * first and last event, bounds the search for its completions on other days; without it every
   * held day is searched. Returns true iff anything changed.
   */
  record(hi: number, lo: number, day: number, ts: number, spanDays?: readonly [number, number]): boolean {
    return this.recordAt(hi, lo, day, dayTime(ts, day), spanDays)
  }

  /** `record` for a time given as `dayTime(ts, day)` (floored: a day holds whole ms) */
  recordAt(hi: number, lo: number, day: number, rel: number, spanDays?: readonly [number, number]): boolean {
    if (!(rel >= 0 && rel < DAY_SPAN_MS)) throw new RangeError(`time ${dayTimeBase(day) + rel} cannot be on day ${day} in any time zone`)
    // the search for the session's other days reads the span (every day without one): it must be
    // in memory before anything changes
    if (this.#stored.size > 0) this.#mustHold(Math.min(day, spanDays?.[0] ?? -Infinity), Math.max(day, spanDays?.[1] ?? Infinity))
    let map = this.#days.get(day)
    if (map === undefined) {
      // room for as many as the day before: a busy goal's day then never grows during the day,
      // where doubling a table of millions stalls the fold for 60–120 ms (the room is zeroed
      // memory the system maps as it is first written, not at once)
      map = new U64Map(this.daySize(day - 1))
      this.#days.set(day, map)
      this.#sorted = undefined
    }
    const before = map.size
    if (!map.setMin(hi, lo, rel)) return false
    this.#stamps.set(day, ++lastStamp)
    this.#stampPart(day, hi, lo)
    if (map.size === before) return true
    this.#size++
    this.#linkOtherDays(hi, lo, day, spanDays)
    return true
  }

  /**
   * Keeps a further completion time of a session that completed the goal on `day` already. Call it
   * before `record` (it compares with the session's earliest time so far). Returns true iff the
   * day's times changed.
   */
  recordTime(hi: number, lo: number, day: number, ts: number): boolean {
    return this.recordTimeAt(hi, lo, day, dayTime(ts, day))
  }

  /** `recordTime` for a time given as `dayTime(ts, day)` */
  recordTimeAt(hi: number, lo: number, day: number, rel: number): boolean {
    const earliest = this.#set(day)?.get(hi, lo)
    if (earliest === undefined) return false
    let times = this.#times.get(day)
    if (times === undefined) {
      if (rel === earliest) return false
      this.#times.set(day, (times = new CompletionTimes()))
    }
    if (!times.add(hi, lo, earliest, rel)) return false
    this.#stamps.set(day, ++lastStamp)
    this.#stampPart(day, hi, lo)
    return true
  }

  /** Stamps the session's part of a recent day with the day's last stamp. */
  #stampPart(day: number, hi: number, lo: number): void {
    if (day > this.#newest) {
      this.#newest = day
      for (const d of this.#partStamps.keys()) if (d < day - 1) this.#partStamps.delete(d)
    }
    if (day < this.#newest - 1) return
    let parts = this.#partStamps.get(day)
    if (parts === undefined) this.#partStamps.set(day, (parts = new Float64Array(2 ** RECENT_PART_BITS)))
    parts[hashPart(hi, lo, RECENT_PART_BITS)] = lastStamp
  }

  /**
   * The stamps of a recent day's parts (RECENT_PART_BITS), or undefined: not a recent day, or
   * changed in a way not stamped by part since. A new array means every part changed.
   */
  partStamps(day: number): Float64Array | undefined {
    return this.#partStamps.get(day)
  }

  /**
   * The first completion of a session at or after `from` and no later than `until` (epoch ms),
   * dated on a day in [fromDay, toDay]; undefined when there is none.
   */
  firstCompletion(hi: number, lo: number, from: number, until: number, fromDay: number, toDay: number): number | undefined {
    // a day's instants lie in [base, base + 50 h): only a few days can hold [from, until]
    const first = Math.max(fromDay, Math.floor((from - DAY_SPAN_MS + TIME_BASE_SHIFT_MS) / DAY_MS))
    const last = Math.min(toDay, Math.floor((until + TIME_BASE_SHIFT_MS) / DAY_MS))
    let best: number | undefined
    for (let day = first; day <= last; day++) {
      const earliest = this.#set(day)?.get(hi, lo)
      if (earliest === undefined) continue
      const ts = this.completionFrom(hi, lo, day, dayTimeBase(day) + earliest, from)
      if (ts !== undefined && ts <= until && (best === undefined || ts < best)) best = ts
    }
    return best
  }

  /**
   * The first completion of a session on `day` at or after `from` (epoch ms), given its earliest
   * completion that day (`earliest`, epoch ms, from the day's set); undefined when there is none.
   */
  completionFrom(hi: number, lo: number, day: number, earliest: number, from: number): number | undefined {
    if (earliest >= from) return earliest
    const base = dayTimeBase(day)
    const times = this.#stored.size > 0 && this.#stored.has(day) ? this.#residueOf(hi, lo, day).times?.of(hi, lo) : this.#times.get(day)?.of(hi, lo)
    const rel = times === undefined ? undefined : firstAtOrAfter(times, from - base)
    return rel === undefined ? undefined : base + rel
  }

  /** A day's further completion times, for the encoder. */
  timesOf(day: number): CompletionTimes | undefined {
    return this.#times.get(day)
  }

  /**
   * Joins decoded completion times of a day into what is held. A day held in the store only keeps
   * its times there: they come back with its set (`load`).
   */
  mergeTimes(day: number, times: CompletionTimes): void {
    if (this.#stored.has(day)) return
    const held = this.#times.get(day)
    if (held === undefined) this.#times.set(day, times)
    else held.merge(times)
    this.#stamps.set(day, ++lastStamp)
    this.#partStamps.delete(day)
  }

  /** The stamp of a day's last change (0 for a day not held): equal stamps, equal day. */
  dayStamp(day: number): number {
    return this.#stamps.get(day) ?? 0
  }

  /** Entries on days in [fromDay, toDay]: a session counts once per day. */
  entriesIn(fromDay: number, toDay: number): number {
    let sum = 0
    for (const [d, map] of this.#days) if (d >= fromDay && d <= toDay) sum += map.size
    for (const [d, size] of this.#stored) if (d >= fromDay && d <= toDay) sum += size
    return sum
  }

  /** Distinct sessions with a completion on a day in [fromDay, toDay]. Exact. */
  conversions(fromDay: number, toDay: number): number {
    let sum = 0
    if (toDay - fromDay + 1 <= this.#days.size) {
      for (let d = fromDay; d <= toDay; d++) sum += this.#days.get(d)?.size ?? 0
    } else {
      for (const [d, map] of this.#days) if (d >= fromDay && d <= toDay) sum += map.size
    }
    for (const [d, size] of this.#stored) if (d >= fromDay && d <= toDay) sum += size
    return sum - this.#multi.overcount(fromDay, toDay)
  }

  /**
   * Sessions for one page of the expansion list, newest first by their first completion inside
   * the window: every entry with ts == cursorTs, then the `limit` newest with ts < cursorTs (all
   * ts without a cursor), then every further entry tied with the last of those, so the caller can
   * order ties by session id and page exactly. Each session appears once.
   */
  candidates(fromDay: number, toDay: number, limit: number, cursorTs?: number): Candidate[] {
    const below = cursorTs ?? Infinity
    const newestFirst = this.days().filter((d) => d >= fromDay && d <= toDay).reverse()
    const skip = this.#multi.laterDaysFilter(fromDay, toDay)
    const floor = limit > 0 ? this.#limitTs(newestFirst, limit, below, skip) : Infinity
    const out: Candidate[] = []
    for (const day of newestFirst) {
      const base = dayTimeBase(day)
      const end = base + DAY_SPAN_MS
      // nothing this old reaches the floor or equals the cursor; older days neither
      if (end <= floor && (cursorTs === undefined || end <= cursorTs)) break
      if (cursorTs !== undefined && base > cursorTs) continue
      this.#set(day)!.forEach((hi, lo, rel) => {
        const ts = base + rel
        if ((ts === cursorTs || (ts < below && ts >= floor)) && !skip(hi, lo, day)) out.push({ hi, lo, ts })
      })
    }
    return out.sort((a, b) => b.ts - a.ts)
  }

  /**
   * Records a completion in an hour of a recent day (`hourKey`); a session completing the goal in
   * two hours is in both. Returns true iff the session is new to the hour.
   */
  recordHour(hi: number, lo: number, key: number): boolean {
    let map = this.#hours.get(key)
    if (map === undefined) this.#hours.set(key, (map = new U64Map()))
    return map.setMin(hi, lo, 0)
  }

  /** Distinct sessions that completed the goal in an hour (`hourKey`). Exact. */
  hourConversions(key: number): number {
    return this.#hours.get(key)?.size ?? 0
  }

  /** The hours held, by `hourKey`, with their sessions (for the encoder). */
  hourMaps(): ReadonlyMap<number, U64Map> {
    return this.#hours
  }

  /** Joins a decoded hour into what is held. */
  mergeHour(key: number, map: U64Map): void {
    const held = this.#hours.get(key)
    if (held === undefined) this.#hours.set(key, map)
    else map.forEach((hi, lo) => void held.setMin(hi, lo, 0))
  }

  /** Forgets the hours of days before `day`; returns the keys forgotten. */
  dropHoursBefore(day: number): number[] {
    const dropped: number[] = []
    for (const key of this.#hours.keys()) {
      if (dayOfHourKey(key) < day) {
        this.#hours.delete(key)
        dropped.push(key)
      }
    }
    return dropped
  }

  /** Whether the session completed the goal on a day in [fromDay, toDay]. */
  hasIn(hi: number, lo: number, fromDay: number, toDay: number): boolean {
    const days = this.#multi.daysOf(hi, lo)
    if (days !== undefined) return days.some((d) => d >= fromDay && d <= toDay)
    // not in the side index: its entries are on one held day at most
    this.#mustHold(fromDay, toDay)
    for (const [d, map] of this.#days) if (d >= fromDay && d <= toDay && map.has(hi, lo)) return true
    return false
  }

  /**
   * Calls `fn` once for every session that completed the goal on a day in [fromDay, toDay], with
   * its first completion inside that range (epoch ms).
   */
  forEachIn(fromDay: number, toDay: number, fn: (hi: number, lo: number, first: number) => void): void {
    this.#mustHold(fromDay, toDay)
    const repeat = this.#multi.laterDaysFilter(fromDay, toDay)
    for (const [d, map] of this.#days) {
      if (d < fromDay || d > toDay) continue
      const base = dayTimeBase(d)
      map.forEach((hi, lo, rel) => {
        if (!repeat(hi, lo, d)) fn(hi, lo, base + rel)
      })
    }
  }

  /**
   * Packs into `out` (emptied first) every entry on a day in [fromDay, toDay] whose session lies
   * in `part` of the hash space cut into 2^bits parts (U64Map.partInto), as [hi, lo, time, day]
   * with the day's earliest completion (`dayTimeBase(day) + time` in epoch ms). A session that
   * completed the goal on several of those days comes once per day.
   */
  partInto(fromDay: number, toDay: number, part: number, bits: number, out: Words): void {
    out.length = 0
    this.#mustHold(fromDay, toDay)
    // called per part of the hash space, thousands of times a question: the days looked up when
    // fewer than those held, and no [day, set] pair made per day either way
    if (toDay - fromDay < this.#days.size) {
      for (let d = fromDay; d <= toDay; d++) this.#days.get(d)?.partInto(part, bits, out, d)
    } else {
      this.#days.forEach((map, d) => {
        if (d >= fromDay && d <= toDay) map.partInto(part, bits, out, d)
      })
    }
  }

  /** Forgets every day before `day` (retention). */
  dropBefore(day: number): void {
    this.dropHoursBefore(day)
    for (const d of this.#times.keys()) if (d < day) this.#times.delete(d)
    for (const d of this.#stamps.keys()) if (d < day) this.#stamps.delete(d)
    for (const d of this.#partStamps.keys()) if (d < day) this.#partStamps.delete(d)
    for (const d of this.#residue.keys()) if (d < day) this.#residue.delete(d)
    let dropped = false
    for (const [d, map] of this.#days) {
      if (d < day) {
        this.#size -= map.size
        this.#days.delete(d)
        dropped = true
      }
    }
    for (const [d, size] of this.#stored) {
      if (d < day) {
        this.#size -= size
        this.#stored.delete(d)
        dropped = true
      }
    }
    if (!dropped) return
    this.#sorted = undefined
    this.#multi.dropBefore(day)
  }

  clear(): void {
    this.#days.clear()
    this.#stored.clear()
    this.#residue.clear()
    this.#hours.clear()
    this.#times.clear()
    this.#stamps.clear()
    this.#partStamps.clear()
    this.#newest = -Infinity
    this.#sorted = []
    this.#multi.clear()
    this.#size = 0
  }

  /** held days, ascending */
  days(): number[] {
    if (this.#sorted === undefined) this.#sorted = [...this.#days.keys(), ...this.#stored.keys()].sort((a, b) => a - b)
    return this.#sorted.slice()
  }

  memoryBytes(): number {
    let bytes = 96 + this.#multi.memoryBytes() + 40 * this.#stored.size
    for (const map of this.#days.values()) bytes += 48 + map.memoryBytes()
    for (const map of this.#hours.values()) bytes += 48 + map.memoryBytes()
    for (const times of this.#times.values()) bytes += 48 + times.memoryBytes()
    for (const r of this.#residue.values()) bytes += 64 + r.earliest.memoryBytes() + (r.times?.memoryBytes() ?? 0)
    return bytes
  }

  /**
   * One day's sessions → time (uint32 ms after `dayTimeBase(day)`), the map itself (for the
   * encoder); undefined for a day not held, or held in the store only (`holds` tells them apart).
   */
  dayMap(day: number): U64Map | undefined {
    return this.#days.get(day)
  }

  /** Whether the goal holds the day, in memory or in the store. */
  holds(day: number): boolean {
    return this.#days.has(day) || this.#stored.has(day)
  }

  /** Sessions that completed the goal on one day. */
  daySize(day: number): number {
    return this.#days.get(day)?.size ?? this.#stored.get(day) ?? 0
  }

  /** Whether the day's set is held in the store only. */
  isStored(day: number): boolean {
    return this.#stored.has(day)
  }

  /** The days in [fromDay, toDay] held in the store only, ascending. */
  storedDays(fromDay = -Infinity, toDay = Infinity): number[] {
    const out: number[] = []
    for (const d of this.#stored.keys()) if (d >= fromDay && d <= toDay) out.push(d)
    return out.sort((a, b) => a - b)
  }

  /** how many days are held in the store only */
  get storedCount(): number {
    return this.#stored.size
  }

  /**
   * Lets a day's set and its further completion times go from memory, keeping its size: the
   * caller has made sure the store holds both as they are (the day is settled and written). Its
   * counts, stamp and side index stay, and what funnels read of its sessions on several days
   * (`#residue`). False when the day's set is not in memory.
   */
  evict(day: number): boolean {
    const map = this.#days.get(day)
    if (map === undefined) return false
    const earliest = new U64Map()
    // the sessions whose last day lies within a week of it: the whole index would be a walk of every
    // session on several days of the retention per day let go; one spanning longer is read back
    this.#multi.forEachOn(day, day + KEPT_SPAN_DAYS, (hi, lo) => {
      const rel = map.get(hi, lo)
      if (rel !== undefined) earliest.setMin(hi, lo, rel)
    })
    if (earliest.size > 0) {
      // the day's further times are of the few sessions completing again that day
      const times = this.#times.get(day)
      const kept: number[] = []
      times?.forEach((hi, lo) => {
        if (earliest.get(hi, lo) !== undefined) kept.push(hi, lo)
      })
      this.#residue.set(day, { earliest, times: kept.length > 0 ? times!.pick(kept) : undefined })
    }
    this.#stored.set(day, map.size)
    this.#days.delete(day)
    this.#times.delete(day)
    return true
  }

  /**
   * Takes back a day's set and further completion times read from the store (after evict). Its stamp stays: the set is the one
   * that left, and results kept under the stamp still hold. False when the day is not held in the
   * store only (loaded meanwhile, or dropped by retention).
   */
  load(day: number, map: U64Map, times?: CompletionTimes): boolean {
    const size = this.#stored.get(day)
    if (size === undefined) return false
    this.#stored.delete(day)
    this.#residue.delete(day)
    this.#days.set(day, map)
    if (times !== undefined && times.size > 0) this.#times.set(day, times)
    if (map.size !== size) {
      // the store disagrees with the count kept: the store's set is what the day holds now
      this.#size += map.size - size
      this.#stamps.set(day, ++lastStamp)
      this.#partStamps.delete(day)
    }
    return true
  }

  /** Installs a decoded day (replacing it); restore the side index with `setMultiDay` as well. */
  setDay(day: number, map: U64Map): void {
    const old = this.#days.get(day)
    const stored = this.#stored.get(day)
    if (old !== undefined) this.#size -= old.size
    else if (stored !== undefined) {
      this.#size -= stored
      this.#stored.delete(day)
      this.#residue.delete(day)
    } else this.#sorted = undefined
    this.#days.set(day, map)
    this.#size += map.size
    this.#stamps.set(day, ++lastStamp)
    this.#partStamps.delete(day)
  }

  /** Joins a decoded part of a day into what is held (a stored day may come in several parts). */
  mergeDay(day: number, map: U64Map): void {
    const held = this.#set(day)
    if (held === undefined) return this.setDay(day, map)
    const before = held.size
    map.forEach((hi, lo, v) => void held.setMin(hi, lo, v))
    this.#size += held.size - before
    this.#stamps.set(day, ++lastStamp)
    this.#partStamps.delete(day)
  }

  /** The side index's sessions with their days (valid during the call only). */
  forEachIndexed(fn: (hi: number, lo: number, days: readonly number[]) => void): void {
    this.#multi.forEach(fn)
  }

  /** The side index's sessions whose last day is `day` or later, with their days (valid during the call only). */
  forEachIndexedFrom(day: number, fn: (hi: number, lo: number, days: readonly number[]) => void): void {
    this.#multi.forEachEndingFrom(day, fn)
  }

  /** The days a session is indexed with, ascending (valid until the next call); undefined when it is not indexed. */
  indexedDays(hi: number, lo: number): readonly number[] | undefined {
    return this.#multi.daysView(hi, lo)
  }

  /** The earliest completion on `day` (epoch ms); undefined when the session has none that day. */
  earliestOn(hi: number, lo: number, day: number): number | undefined {
    const rel = this.#stored.size > 0 && this.#stored.has(day) ? this.#residueOf(hi, lo, day).earliest.get(hi, lo) : this.#days.get(day)?.get(hi, lo)
    return rel === undefined ? undefined : dayTimeBase(day) + rel
  }

  /** Appends to `out` the held days in [fromDay, toDay] whose set has the session. */
  heldDaysIn(hi: number, lo: number, fromDay: number, toDay: number, out: number[]): void {
    const indexed = this.#multi.daysOf(hi, lo)
    if (indexed !== undefined) {
      for (const d of indexed) if (d >= fromDay && d <= toDay) out.push(d)
      return
    }
    this.#daysHolding(hi, lo, fromDay, toDay, out)
  }

  /** Appends to `out` the held days in [fromDay, toDay] whose set has the session, by looking in each. */
  #daysHolding(hi: number, lo: number, fromDay: number, toDay: number, out: number[]): void {
    this.#mustHold(fromDay, toDay)
    if (toDay - fromDay < this.#days.size) {
      for (let d = fromDay; d <= toDay; d++) if (this.#days.get(d)?.has(hi, lo)) out.push(d)
    } else {
      for (const [d, map] of this.#days) if (d >= fromDay && d <= toDay && map.has(hi, lo)) out.push(d)
    }
  }

  /**
   * Indexes a session with held days of its own, though it may have converted this goal on one
   * day only: it completed other goals of the site on other days. True iff the index changed.
   */
  indexAcross(hi: number, lo: number, days: readonly number[]): boolean {
    const held = this.#multi.daysView(hi, lo)
    if (held !== undefined && days.every((d) => held.includes(d))) return false
    return this.#multi.add(hi, lo, days)
  }

  /** The side index: each multi-day session with its days, ascending (for the encoder). */
  multiDayEntries(): MultiDayEntry[] {
    return this.#multi.entries()
  }

  /** The side index's entries of the given sessions ([hi, lo, …]) that it holds, for a snapshot's delta. */
  multiDayEntriesOf(sessions: readonly number[]): MultiDayEntry[] {
    const out: MultiDayEntry[] = []
    for (let i = 0; i < sessions.length; i += 2) {
      const days = this.#multi.daysOf(sessions[i], sessions[i + 1])
      if (days) out.push({ hi: sessions[i], lo: sessions[i + 1], days: [...days] })
    }
    return out
  }

  /**
   * Installs a restored side index (its parts joined). Each session keeps only the days whose held
   * set has it: a part stored before retention shrank the index can outlive the whole write that
   * replaced it (a snapshot that failed after deciding to write whole forgets the older parts it
   * was to delete), and its days are gone with their sets.
   */
  setMultiDay(entries: readonly MultiDayEntry[]): void {
    this.#multi.load(entries.map((e) => ({ ...e, days: e.days.filter((d) => this.#stored.has(d) || this.#days.get(d)?.get(e.hi, e.lo) !== undefined) })))
  }

  /**
   * Derives the side index from the day buckets alone, in one pass over every entry (measured
   * ~0.25 s per million): a restore can use it instead of a stored side index it cannot trust.
   */
  rebuildMultiDay(): void {
    this.#mustHold(-Infinity, Infinity)
    const days = this.days()
    const seenOn = new U64Map(this.#size)
    const found = new U64Map()
    const entries: MultiDayEntry[] = []
    for (let k = 0; k < days.length; k++) {
      const day = days[k]
      this.#set(day)!.forEach((hi, lo) => {
        const at = found.get(hi, lo)
        if (at !== undefined) entries[at].days.push(day)
        else if (seenOn.has(hi, lo)) {
          found.set(hi, lo, entries.length)
          entries.push({ hi, lo, days: [days[seenOn.get(hi, lo)!], day] })
        } else seenOn.set(hi, lo, k)
      })
    }
    this.#multi.load(entries)
  }

  /** A new entry on `day`: if the session holds entries on other days too, index it. */
  #linkOtherDays(hi: number, lo: number, day: number, span: readonly [number, number] | undefined): void {
    if (this.#multi.addDay(hi, lo, day)) return
    // a session whose events lie on one day has its entries there
    if (this.#days.size + this.#stored.size === 1 || (span !== undefined && span[0] === span[1])) return
    // `day` is among them: the session was just recorded on it
    const held = heldScratch
    held.length = 0
    this.#daysHolding(hi, lo, span?.[0] ?? -Infinity, span?.[1] ?? Infinity, held)
    if (held.length > 1) this.#multi.add(hi, lo, held)
  }

  /** What a stored day kept in memory of a session on several days; throws DaysNotLoaded when it kept nothing of it. */
  #residueOf(hi: number, lo: number, day: number): { earliest: U64Map; times: CompletionTimes | undefined } {
    const r = this.#residue.get(day)
    if (r === undefined || r.earliest.get(hi, lo) === undefined) throw new DaysNotLoaded(this, [day])
    return r
  }

  /** A day's set; throws DaysNotLoaded for a day held in the store only. */
  #set(day: number): U64Map | undefined {
    const map = this.#days.get(day)
    if (map === undefined && this.#stored.size > 0 && this.#stored.has(day)) throw new DaysNotLoaded(this, [day])
    return map
  }

  /** Throws DaysNotLoaded when a day in [fromDay, toDay] is held in the store only. */
  #mustHold(fromDay: number, toDay: number): void {
    if (this.#stored.size === 0) return
    for (const d of this.#stored.keys()) if (d >= fromDay && d <= toDay) throw new DaysNotLoaded(this, this.storedDays(fromDay, toDay))
  }

  /**
   * The smallest ts among the `limit` newest eligible ones (−∞ if fewer): a bounded min-heap.
   * Days go newest first, so once the heap is full the older days, which can hold nothing newer
   * than its minimum, are not read at all: the first page of a 30-day window reads ~2 days.
   */
  #limitTs(newestFirst: number[], limit: number, below: number, skip: (hi: number, lo: number, day: number) => boolean): number {
    const heap = new Float64Array(limit)
    let n = 0
    for (const day of newestFirst) {
      const base = dayTimeBase(day)
      if (base >= below) continue
      if (n === limit && base + DAY_SPAN_MS <= heap[0]) break
      this.#set(day)!.forEach((hi, lo, rel) => {
        const ts = base + rel
        if (ts >= below || (n === limit && ts <= heap[0]) || skip(hi, lo, day)) return
        if (n < limit) heapPush(heap, n++, ts)
        else heapReplaceRoot(heap, n, ts)
      })
    }
    return n === limit ? heap[0] : -Infinity
  }
}

function heapPush(heap: Float64Array, n: number, v: number): void {
  let i = n
  heap[i] = v
  while (i > 0) {
    const parent = (i - 1) >> 1
    if (heap[parent] <= v) break
    heap[i] = heap[parent]
    heap[parent] = v
    i = parent
  }
}

function heapReplaceRoot(heap: Float64Array, n: number, v: number): void {
  let i = 0
  for (;;) {
    const l = 2 * i + 1
    if (l >= n) break
    const r = l + 1
    const c = r < n && heap[r] < heap[l] ? r : l
    if (heap[c] >= v) break
    heap[i] = heap[c]
    i = c
  }
  heap[i] = v
}
