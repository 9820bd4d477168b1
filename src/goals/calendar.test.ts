import t from 'tap'
import { DAY_MS, dayOf, dayOfHourKey, dayStart, formatDay, hourIndex, hourKey, hoursOf, isValidTimeZone, localIso, offsetOf, parseDay, todayOf } from './calendar.js'

const at = (iso: string): number => Date.parse(iso)
const day = (s: string): number => parseDay(s)!

t.test('isValidTimeZone', async (t) => {
  for (const tz of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Etc/GMT+5']) t.ok(isValidTimeZone(tz), tz)
  for (const tz of ['', 'Mars/Olympus', 'Europe/Berlinn', 'not a zone']) t.notOk(isValidTimeZone(tz), JSON.stringify(tz))
})

t.test('formatDay and parseDay', async (t) => {
  t.equal(parseDay('1970-01-01'), 0)
  t.equal(parseDay('1970-01-02'), 1)
  t.equal(parseDay('1969-12-31'), -1)
  t.equal(formatDay(0), '1970-01-01')
  t.equal(formatDay(-1), '1969-12-31')
  t.equal(parseDay('2024-02-29'), Date.UTC(2024, 1, 29) / DAY_MS)
  for (const d of [0, 1, 19_000, 20_000, 20_513, -365]) t.equal(parseDay(formatDay(d)), d)
  for (const bad of ['2023-02-29', '2024-13-01', '2024-00-10', '2024-1-01', '20240101', '2024-01-01T00:00Z', '']) {
    t.equal(parseDay(bad), undefined, JSON.stringify(bad))
  }
})

t.test('UTC', async (t) => {
  t.equal(dayOf(at('2024-06-01T00:00:00Z'), 'UTC'), day('2024-06-01'))
  t.equal(dayOf(at('2024-06-01T23:59:59.999Z'), 'UTC'), day('2024-06-01'))
  t.equal(dayOf(-1, 'UTC'), -1)
  t.equal(todayOf('UTC', at('2024-06-01T12:00:00Z')), day('2024-06-01'))
  t.equal(offsetOf(0, 'UTC'), 0)
})

t.test('America/New_York across both DST changes', async (t) => {
  const tz = 'America/New_York'
  // 2024-03-10 02:00 EST → 03:00 EDT (07:00Z): a 23-hour day
  t.equal(dayOf(at('2024-03-10T04:59:59.999Z'), tz), day('2024-03-09'))
  t.equal(dayOf(at('2024-03-10T05:00:00Z'), tz), day('2024-03-10'))
  t.equal(dayOf(at('2024-03-11T03:59:59.999Z'), tz), day('2024-03-10'))
  t.equal(dayOf(at('2024-03-11T04:00:00Z'), tz), day('2024-03-11'))
  t.equal(offsetOf(at('2024-03-10T06:59:59Z'), tz), -5 * 3_600_000)
  t.equal(offsetOf(at('2024-03-10T07:00:00Z'), tz), -4 * 3_600_000)
  // 2024-11-03 02:00 EDT → 01:00 EST (06:00Z): a 25-hour day
  t.equal(dayOf(at('2024-11-03T03:59:59Z'), tz), day('2024-11-02'))
  t.equal(dayOf(at('2024-11-03T04:00:00Z'), tz), day('2024-11-03'))
  t.equal(dayOf(at('2024-11-04T04:59:59Z'), tz), day('2024-11-03'))
  t.equal(dayOf(at('2024-11-04T05:00:00Z'), tz), day('2024-11-04'))
})

t.test('Europe/Berlin across both DST changes', async (t) => {
  const tz = 'Europe/Berlin'
  t.equal(dayOf(at('2024-03-30T22:59:59Z'), tz), day('2024-03-30'))
  t.equal(dayOf(at('2024-03-30T23:00:00Z'), tz), day('2024-03-31'))
  t.equal(dayOf(at('2024-03-31T21:59:59Z'), tz), day('2024-03-31'))
  t.equal(dayOf(at('2024-03-31T22:00:00Z'), tz), day('2024-04-01'))
  t.equal(dayOf(at('2024-10-26T21:59:59Z'), tz), day('2024-10-26'))
  t.equal(dayOf(at('2024-10-26T22:00:00Z'), tz), day('2024-10-27'))
  t.equal(dayOf(at('2024-10-27T22:59:59Z'), tz), day('2024-10-27'))
  t.equal(dayOf(at('2024-10-27T23:00:00Z'), tz), day('2024-10-28'))
})

t.test('odd offsets: Asia/Kathmandu (+05:45), Pacific/Chatham (+12:45/+13:45), Pacific/Kiritimati (+14)', async (t) => {
  t.equal(dayOf(at('2024-01-01T18:14:59Z'), 'Asia/Kathmandu'), day('2024-01-01'))
  t.equal(dayOf(at('2024-01-01T18:15:00Z'), 'Asia/Kathmandu'), day('2024-01-02'))
  t.equal(offsetOf(at('2024-01-01T00:00:00Z'), 'Asia/Kathmandu'), (5 * 60 + 45) * 60_000)
  t.equal(dayOf(at('2024-07-01T11:14:59Z'), 'Pacific/Chatham'), day('2024-07-01'))
  t.equal(dayOf(at('2024-07-01T11:15:00Z'), 'Pacific/Chatham'), day('2024-07-02'))
  t.equal(dayOf(at('2024-07-01T09:59:59Z'), 'Pacific/Kiritimati'), day('2024-07-01'))
  t.equal(dayOf(at('2024-07-01T10:00:00Z'), 'Pacific/Kiritimati'), day('2024-07-02'))
  t.equal(dayOf(at('2024-07-01T11:59:59Z'), 'Etc/GMT+12'), day('2024-06-30'))
})

t.test('a transition off the quarter hour: Africa/Monrovia, 1972-01-07 (−00:44:30 → UTC)', async (t) => {
  const tz = 'Africa/Monrovia'
  // Both instants share the 15-minute bucket 00:30–00:45Z; the zone changes offset inside it.
  t.equal(dayOf(at('1972-01-07T00:44:29Z'), tz), day('1972-01-06'))
  t.equal(dayOf(at('1972-01-07T00:44:30Z'), tz), day('1972-01-07'))
  t.equal(dayOf(at('1972-01-07T00:30:00Z'), tz), day('1972-01-06'))
  t.equal(dayOf(at('1972-01-07T00:44:29Z'), tz), day('1972-01-06'), 'again, from the cache')
  t.equal(offsetOf(at('1972-01-07T00:30:00Z'), tz), -(44 * 60 + 30) * 1000)
  t.equal(offsetOf(at('1972-01-07T00:44:30Z'), tz), 0)
})

t.test('agrees with Intl at random instants over two years in many zones', async (t) => {
  const zones = ['America/New_York', 'Europe/Berlin', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns', 'Asia/Tehran', 'Africa/Casablanca', 'Pacific/Apia']
  const start = at('2023-01-01T00:00:00Z')
  const span = 2 * 366 * DAY_MS
  let seed = 42
  let mismatches = 0
  let checks = 0
  for (const tz of zones) {
    const ref = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' })
    for (let i = 0; i < 3000; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      const ts = start + Math.floor((seed / 2 ** 32) * span)
      if (formatDay(dayOf(ts, tz)) !== ref.format(ts)) mismatches++
      checks++
    }
  }
  t.equal(mismatches, 0, `${checks} instants`)
})

t.test('dayStart: local midnight, or the first instant of a day whose midnight a transition skipped', async (t) => {
  t.equal(dayStart(day('2026-11-25'), 'UTC'), at('2026-11-25T00:00:00Z'))
  t.equal(dayStart(day('2026-11-25'), 'Europe/Berlin'), at('2026-11-24T23:00:00Z'))
  t.equal(dayStart(day('2026-07-01'), 'Europe/Berlin'), at('2026-06-30T22:00:00Z'))
  t.equal(dayStart(day('2026-11-25'), 'Asia/Kathmandu'), at('2026-11-24T18:15:00Z'))
  t.equal(dayStart(day('2026-11-25'), 'Pacific/Kiritimati'), at('2026-11-24T10:00:00Z'), 'UTC+14')
  t.equal(dayStart(day('2026-11-25'), 'Etc/GMT+12'), at('2026-11-25T12:00:00Z'), 'UTC−12')
  // Chile moves its clocks at midnight: 2026-09-06 has no 00:00 in America/Santiago
  const skipped = dayStart(day('2026-09-06'), 'America/Santiago')
  t.equal(dayOf(skipped, 'America/Santiago'), day('2026-09-06'))
  t.equal(dayOf(skipped - 1, 'America/Santiago'), day('2026-09-05'), 'the instant before is the day before')
})

t.test('hoursOf: 24, and 23 / 25 on DST days', async (t) => {
  t.equal(hoursOf(day('2026-11-25'), 'Europe/Berlin'), 24)
  t.equal(hoursOf(day('2026-03-29'), 'Europe/Berlin'), 23, 'spring forward')
  t.equal(hoursOf(day('2026-10-25'), 'Europe/Berlin'), 25, 'fall back')
  t.equal(hoursOf(day('2026-03-08'), 'America/New_York'), 23)
  t.equal(hoursOf(day('2026-11-01'), 'America/New_York'), 25)
  t.equal(hoursOf(day('2026-10-25'), 'UTC'), 24)
})

t.test('hourIndex, hourKey and localIso name an hour as the zone does', async (t) => {
  const d = day('2026-10-25')
  const start = dayStart(d, 'Europe/Berlin')
  // 02:00–03:00 happens twice that day: as the third and the fourth hour
  t.equal(hourIndex(at('2026-10-25T00:30:00Z'), start), 2)
  t.equal(hourIndex(at('2026-10-25T01:30:00Z'), start), 3)
  t.equal(localIso(start + 2 * 3_600_000, 'Europe/Berlin'), '2026-10-25T02:00:00+02:00')
  t.equal(localIso(start + 3 * 3_600_000, 'Europe/Berlin'), '2026-10-25T02:00:00+01:00')
  t.equal(localIso(at('2026-11-25T00:00:00Z'), 'UTC'), '2026-11-25T00:00:00+00:00')
  t.equal(localIso(at('2026-11-25T00:00:00Z'), 'America/St_Johns'), '2026-11-24T20:30:00-03:30')
  t.equal(dayOfHourKey(hourKey(d, 24)), d, 'the 25th hour is still its day')
  t.ok(hourKey(d, 24) < hourKey(d + 1, 0), 'hours sort with time')
})
