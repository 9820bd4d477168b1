import t from 'tap'
import { parseTimestamp } from './timestamp.js'

t.test('Z and offsets give the same instant', async (t) => {
  const utc = Date.UTC(2026, 2, 1, 10, 0, 0)
  t.equal(parseTimestamp('2026-03-01T10:00:00Z'), utc)
  t.equal(parseTimestamp('2026-03-01T10:00:00z'), utc)
  t.equal(parseTimestamp('2026-03-01T12:00:00+02:00'), utc)
  t.equal(parseTimestamp('2026-03-01T12:00:00+0200'), utc)
  t.equal(parseTimestamp('2026-03-01T12:00:00+02'), utc)
  t.equal(parseTimestamp('2026-03-01T04:30:00-05:30'), utc)
  t.equal(parseTimestamp('2026-03-01T10:00:00+00:00'), utc)
  t.equal(parseTimestamp('2026-03-01T10:00Z'), utc, 'seconds may be left out')
  t.equal(parseTimestamp('2026-03-01T00:30:00+01:00'), Date.UTC(2026, 1, 28, 23, 30), 'offset crosses a day')
})

t.test('fractions of a second', async (t) => {
  const base = Date.UTC(2026, 2, 1, 10, 0, 0)
  t.equal(parseTimestamp('2026-03-01T10:00:00.5Z'), base + 500)
  t.equal(parseTimestamp('2026-03-01T10:00:00.123Z'), base + 123)
  t.equal(parseTimestamp('2026-03-01T10:00:00.123456789Z'), base + 123)
  t.equal(parseTimestamp('2026-03-01T10:00:00,25Z'), base + 250)
})

t.test('agrees with Date.parse on what both understand', async (t) => {
  for (const s of ['2024-02-29T23:59:59.999Z', '1999-12-31T23:00:00-01:00', '2030-07-04T00:00:00+14:00']) {
    t.equal(parseTimestamp(s), Date.parse(s), s)
  }
})

t.test('refuses what is not a date and time with a zone', async (t) => {
  for (const s of [
    '2026-03-01', // date only
    '2026-03-01T10:00:00', // no zone: the instant is unknown
    '2026-03-01 10:00:00Z', // not ISO 8601
    'yesterday',
    '1772359200000',
    '',
    '2026-3-1T10:00:00Z',
    '2026-02-29T10:00:00Z', // not a leap year
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T10:60:00Z',
    '2026-03-01T10:00:61Z',
    '2026-03-01T10:00:00+24:00',
    '2026-03-01T10:00:00+02:60',
    '2026-03-01T10:00:00 Z',
    ' 2026-03-01T10:00:00Z',
  ]) {
    t.equal(parseTimestamp(s), undefined, JSON.stringify(s))
  }
})

t.test('leap day of a leap year', async (t) => {
  t.equal(parseTimestamp('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29))
  t.equal(parseTimestamp('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29))
  t.equal(parseTimestamp('1900-02-29T00:00:00Z'), undefined)
})
