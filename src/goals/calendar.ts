/**
 * Calendar days in a site's IANA time zone. A day is an integer: days since 1970-01-01 of the
 * local calendar date, so day arithmetic is plain integer arithmetic and days sort numerically.
 */
export const DAY_MS = 86_400_000

/**
 * Zone offsets only change at transitions, and every transition of the current tz database falls
 * on a quarter hour in UTC, so the offset is cached per 15-minute UTC bucket. Intl.DateTimeFormat
 * costs ~1–2 µs a call; a cache hit is an array read. A bucket whose two ends disagree (a
 * transition off the quarter hour, as in some historical rules) is marked mixed and always asks Intl.
 */
const BUCKET_MS = 15 * 60_000
/** direct-mapped: 4096 buckets cover 42 days of events before two share a slot */
const CACHE_SLOTS = 4096
const MIXED = 0x7fffffff

interface Zone {
  format: Intl.DateTimeFormat
  buckets: Float64Array
  /** offset in ms, or MIXED */
  offsets: Float64Array
}

const zones = new Map<string, Zone>()
let lastName = ''
let lastZone: Zone | undefined

export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

/**
 * The local day of an instant. Throws a RangeError for an unknown zone (validate with
 * `isValidTimeZone` first).
 *
 * @example
 * dayOf(Date.parse('2024-03-10T04:59:59Z'), 'America/New_York') === parseDay('2024-03-09')
 */
export function dayOf(ts: number, tz: string): number {
  if (tz === 'UTC') return Math.floor(ts / DAY_MS)
  return Math.floor((ts + offsetAt(ts, zoneOf(tz))) / DAY_MS)
}

export function todayOf(tz: string, now = Date.now()): number {
  return dayOf(now, tz)
}

/** The zone's offset from UTC at `ts`, in ms (east positive). */
export function offsetOf(ts: number, tz: string): number {
  return tz === 'UTC' ? 0 : offsetAt(ts, zoneOf(tz))
}

/** 'YYYY-MM-DD' of a day number. */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** The day number of a 'YYYY-MM-DD' date, or undefined when it is not a real calendar date. */
export function parseDay(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const date = Number(m[3])
  const ms = Date.UTC(year, month - 1, date)
  const back = new Date(ms)
  // Date.UTC rolls 02-30 over into March; a real date comes back unchanged.
  if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== date) return undefined
  return ms / DAY_MS
}

function zoneOf(tz: string): Zone {
  if (tz === lastName && lastZone !== undefined) return lastZone
  let zone = zones.get(tz)
  if (zone === undefined) {
    zone = {
      format: new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
      buckets: new Float64Array(CACHE_SLOTS).fill(NaN),
      offsets: new Float64Array(CACHE_SLOTS),
    }
    zones.set(tz, zone)
  }
  lastName = tz
  lastZone = zone
  return zone
}

function offsetAt(ts: number, zone: Zone): number {
  const bucket = Math.floor(ts / BUCKET_MS)
  const slot = bucket & (CACHE_SLOTS - 1)
  if (zone.buckets[slot] === bucket) {
    const offset = zone.offsets[slot]
    return offset === MIXED ? exactOffset(ts, zone.format) : offset
  }
  const start = bucket * BUCKET_MS
  const first = exactOffset(start, zone.format)
  const same = exactOffset(start + BUCKET_MS - 1, zone.format) === first
  zone.buckets[slot] = bucket
  zone.offsets[slot] = same ? first : MIXED
  return same ? first : exactOffset(ts, zone.format)
}

/** local wall-clock time read as if it were UTC, minus the instant: the offset */
function exactOffset(ts: number, format: Intl.DateTimeFormat): number {
  const second = Math.floor(ts / 1000) * 1000
  let year = 0
  let month = 0
  let date = 0
  let hour = 0
  let minute = 0
  let sec = 0
  for (const part of format.formatToParts(second)) {
    switch (part.type) {
      case 'year': year = Number(part.value); break
      case 'month': month = Number(part.value); break
      case 'day': date = Number(part.value); break
      case 'hour': hour = Number(part.value); break
      case 'minute': minute = Number(part.value); break
      case 'second': sec = Number(part.value); break
    }
  }
  return Date.UTC(year, month - 1, date, hour, minute, sec) - second
}

const HOUR_MS = 3_600_000

/**
 * The first instant of a local day: its midnight, or where a transition skips midnight (as some
 * zones' DST did), the first instant the day has. Found by bisection on `dayOf`, since a day's
 * start is the one place where the day number steps up, whatever the zone's rules.
 *
 * @example dayStart(parseDay('2026-03-29')!, 'Europe/Berlin') === Date.parse('2026-03-28T23:00:00Z')
 */
export function dayStart(day: number, tz: string): number {
  if (tz === 'UTC') return day * DAY_MS
  // every zone's local day starts within 14 h before and 12 h after its UTC namesake
  let lo = day * DAY_MS - 15 * HOUR_MS
  let hi = day * DAY_MS + 13 * HOUR_MS
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (dayOf(mid, tz) >= day) hi = mid
    else lo = mid
  }
  return hi
}

/** Hours a local day has: 24, or 23 / 25 on a day of a DST change (a partial hour counts as one). */
export function hoursOf(day: number, tz: string): number {
  return Math.ceil((dayStart(day + 1, tz) - dayStart(day, tz)) / HOUR_MS)
}

/** The hour of its local day an instant falls in, counted from the day's start (0 … 24). */
export function hourIndex(ts: number, start: number): number {
  return Math.floor((ts - start) / HOUR_MS)
}

/**
 * An hour of a local day as one number that sorts with time: day × 32 + hour. A day has at most
 * 25 hours, so hours of a day never reach the next day's.
 */
export const hourKey = (day: number, hour: number): number => day * 32 + hour
export const dayOfHourKey = (key: number): number => Math.floor(key / 32)

/**
 * The local date and time of an instant with its offset, as ISO 8601 (`2026-11-16T00:00:00+01:00`;
 * `Z` is never used, so every answer reads the same way).
 */
export function localIso(ts: number, tz: string): string {
  const offset = offsetOf(ts, tz)
  const local = new Date(ts + offset).toISOString().slice(0, 19)
  const sign = offset < 0 ? '-' : '+'
  const minutes = Math.round(Math.abs(offset) / 60_000)
  return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}
