import t from 'tap'
import { PartitionState } from '../stream/index.js'
import { dayOf, hourKey, dayStart } from '../goals/index.js'
import { hash64, hashPart, initHash } from '../sketch/index.js'
import { mergeReports, reportPartial, reportPoints } from './report.js'
import { mergeOverlaps, overlapPartial, overlapParts } from './overlap.js'
import { funnelPartial, funnelParts } from './funnel.js'

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

/** a state with goals a, b, c over days d-9..d: sessions on one or more days, some completing a goal several times a day */
function busyState(seed: number, sessions: number): { state: PartitionState; d: number; fold: (k: number, salt: number) => void } {
  const state = new PartitionState(0, 1000)
  const d = 20_000
  // each session's draws depend on (seed, k, salt) alone, so two states fold the same session alike
  const fold = (k: number, salt: number) => {
    let x = (seed * 2654435761 + k * 40503 + salt * 69069) >>> 0
    const rand = (n: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0
      return (x >>> 8) % n
    }
    const h = hash64(`busy${k}`)
    const events = 1 + rand(6)
    for (let e = 0; e < events; e++) {
      const day = d - rand(10)
      const ts = day * 86_400_000 + rand(20) * HOUR + rand(3_600_000)
      state.recordConversion(['a', 'b', 'c'][rand(3)], h.hi, h.lo, day, ts)
    }
  }
  for (let k = 0; k < sessions; k++) fold(k, 0)
  return { state, d, fold }
}

/** the funnel walked session by session through each step's days: the definition, slowly */
function funnelByDefinition(state: PartitionState, steps: string[], from: number, to: number, windowMs: number): number[] {
  const out = new Array<number>(steps.length).fill(0)
  const goals = steps.map((id) => state.goals.get(id))
  goals[0]?.forEachIn(from, to, (hi, lo, entered) => {
    out[0]++
    let at = entered
    for (let k = 1; k < steps.length; k++) {
      const next = goals[k]?.firstCompletion(hi, lo, at, entered + windowMs, from, to)
      if (next === undefined) return
      out[k]++
      at = next
    }
  })
  return out
}

t.test('overlap and funnels in parts of the hash space equal the session-by-session answer', async (t) => {
  const { state, d } = busyState(7, 30_000)
  const parted = overlapParts(state, { kind: 'overlap', site_id: 's', a: 'a', b: 'b', window: { from: d - 6, to: d } })
  t.ok(parted.bits >= 2, `the walk is cut into ${2 ** parted.bits} parts`)
  for (const [from, to] of [[d - 9, d], [d - 6, d - 2], [d, d]]) {
    const a = state.goals.get('a')!
    const b = state.goals.get('b')!
    const want = { a: 0, b: b.conversions(from, to), both: 0 }
    a.forEachIn(from, to, (hi, lo) => {
      want.a++
      if (b.hasIn(hi, lo, from, to)) want.both++
    })
    t.same(overlapPartial([state], { kind: 'overlap', site_id: 's', a: 'a', b: 'b', window: { from, to } }), want, `overlap over days ${from - d}..${to - d}`)
    for (const [steps, minutes] of [[['a', 'b'], 60], [['a', 'b', 'c'], 600], [['c', 'a', 'c', 'b'], 24 * 60], [['b', 'b'], 30]] as const) {
      const q = { kind: 'funnel' as const, site_id: 's', steps: [...steps], window_ms: minutes * 60_000, window: { from, to } }
      const want = funnelByDefinition(state, [...steps], from, to, q.window_ms)
      t.ok(want[1] > 0 || from === to, 'some sessions go on')
      t.same(funnelPartial([state], q).steps, want, `funnel ${steps.join('→')} within ${minutes} min over days ${from - d}..${to - d}`)
    }
  }
})

t.test('folds between the parts of a walk: each session is counted once, as it stood at its part', async (t) => {
  const bits = overlapParts(busyState(3, 30_000).state, { kind: 'overlap', site_id: 's', a: 'a', b: 'b', window: { from: 0, to: 30_000 } }).bits
  // `live` folds while the walk runs; `expected` gets a fold only when the session's part is still to come
  const live = busyState(3, 30_000)
  const expected = busyState(3, 30_000)
  const w = { from: live.d - 9, to: live.d }
  const overlap = overlapParts(live.state, { kind: 'overlap', site_id: 's', a: 'a', b: 'b', window: w })
  const funnelQuery = { kind: 'funnel' as const, site_id: 's', steps: ['a', 'b', 'c'], window_ms: 6 * HOUR, window: w }
  const funnel = funnelParts(live.state, funnelQuery)
  t.equal(overlap.bits, bits)
  const order = [...Array(2 ** bits).keys()].sort((x, y) => ((x * 7919) % 61) - ((y * 7919) % 61))
  const done = new Set<number>()
  let next = 30_000
  let counted = 0
  for (const part of order) {
    overlap.step(part)
    funnel.step(part)
    done.add(part)
    // new sessions, and more conversions of sessions already walked and still to walk
    for (let j = 0; j < 40; j++) {
      const k = j % 2 === 0 ? next++ : (j * 7477 + part * 131) % 30_000
      live.fold(k, part + 1)
      const h = hash64(`busy${k}`)
      if (!done.has(hashPart(h.hi, h.lo, bits))) expected.fold(k, part + 1)
      else counted++
    }
  }
  t.ok(counted > 100, `${counted} folds landed on sessions already walked`)
  const want = overlapPartial([expected.state], { kind: 'overlap', site_id: 's', a: 'a', b: 'b', window: w })
  t.same(overlap.result(), want, 'overlap')
  t.same(funnel.result().steps, funnelByDefinition(expected.state, funnelQuery.steps, w.from, w.to, funnelQuery.window_ms), 'funnel')
})
