/**
 * RFC 3339 / ISO 8601 extended date and time with a mandatory zone: `Z` or an offset (`+02:00`,
 * `+0200` or `+02`). Seconds and their fraction are optional; a comma may stand for the decimal
 * point as ISO 8601 allows. Zone-less times are refused because their instant is unknowable.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/

export const TIMESTAMP_MESSAGE = 'timestamp must be an ISO 8601 date and time with Z or an offset'

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]
}

/**
 * Epoch milliseconds of an ISO 8601 date and time with `Z` or an offset, or `undefined` when
 * `text` is not one (wrong shape, or a field out of range such as February 30).
 *
 * @example parseTimestamp('2026-03-01T12:00:00+02:00') === Date.UTC(2026, 2, 1, 10)
 */
export function parseTimestamp(text: string): number | undefined {
  const m = DATE_TIME.exec(text)
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const offsetHours = Number(m[10])
    const offsetMins = m[11] === undefined ? 0 : Number(m[11])
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, ms)
  return date.getTime() - offsetMinutes * 60_000
}
