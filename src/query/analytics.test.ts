import t from 'tap'
import { PartitionState } from '../stream/index.js'
import { dayOf, hourKey, dayStart } from '../goals/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { mergeReports, reportPartial, reportPoints } from './report.js'
import { mergeOverlaps, overlapPartial } from './overlap.js'

t.before(initHash)

const HOUR = 3_600_000

t.test('report points: days, or every hour of the days with the DST day\'s 25', async (t) => {
  const d = dayOf(Date.parse('2026-10-25T12:00:00Z'), 'Europe/Berlin')
  const days = reportPoints({ from: d - 1, to: d }, 'day', 'Europe/Berlin')
  t.same(days.points, [d - 1, d])
  t.same(days.starts, [dayStart(d - 1, 'Europe/Berlin'), dayStart(d, 'Europe/Berlin')])
  const hours = reportPoints({ from: d - 1, to: d }, 'hour', 'Europe/Berlin')
  t.equal(hours.points.length, 24 + 25)
  t.equal(hours.points[24], hourKey(d, 0))
  t.equal(hours.points[48], hourKey(d, 24))
  t.equal(hours.starts[48] - hours.starts[24], 24 * HOUR, 'hours are real hours from the day\'s start')
})

t.test('report partials of two partitions add up to one owner\'s answer', async (t) => {
  const tz = 'UTC'
  const site = { timezone: tz }
  const d = dayOf(Date.now(), tz)
  const start = dayStart(d, tz)
  const parts = [new PartitionState(0, 1000), new PartitionState(1, 1000)]
  const one = new PartitionState(2, 1000)
  const fold = (state: PartitionState, k: number, ts: number, converts: boolean) => {
    const h = hash64(`s${k}`)
    const siteState = state.countSession('s', dayOf(ts, tz), h.hi, h.lo)
    const hour = state.hourOf(siteState, ts, dayOf(ts, tz), site.timezone)
    if (hour >= 0) state.countHour('s', siteState, hour, h.hi, h.lo)
    if (converts) state.recordConversion('g', h.hi, h.lo, dayOf(ts, tz), ts, undefined, hour)
  }
  for (let k = 0; k < 40; k++) {
    const ts = start - 30 * HOUR + k * 1_500_000
    for (const state of [parts[k % 2], one]) {
      fold(state, k, ts, k % 3 === 0)
      fold(state, k, ts + 2 * HOUR, k % 5 === 0) // a second event two hours later
    }
  }
  const w = { from: d - 1, to: d }
  for (const interval of ['day', 'hour'] as const) {
    const { points } = reportPoints(w, interval, tz)
    const q = { kind: 'report' as const, site_id: 's', goal_id: 'g', window: w, interval, points }
    const merged = mergeReports(parts.map((p) => reportPartial([p], q)), points.length)
    t.same(merged, reportPartial([one], q), `${interval}: partitions merge exactly`)
    t.ok(merged.converted.some((n) => n > 0), `${interval}: something converted`)
  }
})

t.test('overlap partials count both, per partition, and add up', async (t) => {
  const parts = [new PartitionState(0, 1000), new PartitionState(1, 1000)]
  const d = 20_000
  const ts = d * 86_400_000 + 12 * HOUR
  const want = { a: 0, b: 0, both: 0 }
  for (let k = 0; k < 100; k++) {
    const h = hash64(`s${k}`)
    const state = parts[k % 2]
    const inA = k % 2 === 0
    const inB = k % 3 === 0
    if (inA) state.recordConversion('a', h.hi, h.lo, d - (k % 4), ts - (k % 4) * 86_400_000)
    if (inB) state.recordConversion('b', h.hi, h.lo, d - (k % 5), ts - (k % 5) * 86_400_000)
    if (inA && k % 7 === 0) state.recordConversion('a', h.hi, h.lo, d, ts) // a second day
    want.a += inA ? 1 : 0
    want.b += inB ? 1 : 0
    want.both += inA && inB ? 1 : 0
  }
  const q = { kind: 'overlap' as const, site_id: 's', a: 'a', b: 'b', window: { from: d - 10, to: d } }
  t.same(mergeOverlaps(parts.map((p) => overlapPartial([p], q))), want)
  t.same(overlapPartial(parts, { ...q, b: 'a' }), { a: want.a, b: want.a, both: want.a }, 'a goal with itself')
  const today = overlapPartial(parts, { ...q, window: { from: d, to: d } })
  t.ok(today.both <= Math.min(today.a, today.b))
})
