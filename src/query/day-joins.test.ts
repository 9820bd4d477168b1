import t, { type Test } from 'tap'
import { GoalIndex, PartitionState, linkSessionsAcross } from '../stream/index.js'
import type { Goal, LoggedEvent } from '../schema/index.js'
import { dayOf } from '../goals/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { overlapPartial } from './overlap.js'
import { funnelPartial } from './funnel.js'
import { funnelByDays, overlapByDays, warmPairs } from './day-joins.js'

t.before(initHash)

const HOUR = 3_600_000
const T0 = Date.UTC(2026, 10, 10, 0)
const SITE = 's'
const ZONE = 'Europe/Berlin'

const GOALS: Goal[] = [
  { id: 'a', site_id: SITE, name: 'A', goal_type: 'pageview', match_path: '/a', created_at: '2026-01-01T00:00:00Z' },
  { id: 'b', site_id: SITE, name: 'B', goal_type: 'pageview', match_path: '/b/*', created_at: '2026-01-01T00:00:00Z' },
  { id: 'c', site_id: SITE, name: 'C', goal_type: 'custom_event', match_event: 'signup', created_at: '2026-01-01T00:00:00Z' },
]

function random(seed: number): (n: number) => number {
  let x = seed >>> 0
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
}

/**
 * Sessions over ten days: most within an hour, a fifth across midnight or over several days (a
 * backend's conversion hours later), each event a pageview of /a, /b/x, /other or a signup;
 * shuffled, so earlier events arrive late.
 */
function sessionEvents(seed: number, sessions: number): LoggedEvent[] {
  const rand = random(seed)
  const events: LoggedEvent[] = []
  for (let k = 0; k < sessions; k++) {
    const start = T0 + rand(10 * 24) * HOUR + rand(HOUR)
    const spread = rand(5) === 0 ? (1 + rand(60)) * HOUR : rand(HOUR)
    const n = 1 + rand(5)
    for (let e = 0; e < n; e++) {
      const ts = start + rand(spread + 1)
      const kind = rand(4)
      const base = { site_id: SITE, session_id: `u${seed}-${k}`, ts, received_at: ts }
      if (kind === 3) events.push({ ...base, type: 'custom_event', event_name: 'signup' })
      else events.push({ ...base, type: 'pageview', path: ['/a', '/b/x', '/other'][kind] })
    }
  }
  for (let i = events.length - 1; i > 0; i--) {
    const j = rand(i + 1)
    ;[events[i], events[j]] = [events[j], events[i]]
  }
  return events
}

function folding(): { state: PartitionState; fold: (e: LoggedEvent) => void } {
  const state = new PartitionState(0, 1000)
  const index = new GoalIndex()
  for (const g of GOALS) index.add(g)
  // a state that starts empty is linked: the fold keeps it so
  state.linkedAcross = true
  const fold = (e: LoggedEvent) => {
    const { hi, lo } = hash64(`${e.site_id}\u0000${e.session_id}`)
    state.fold(e, hi, lo, { timezone: ZONE }, index)
  }
  return { state, fold }
}

const d0 = dayOf(T0, ZONE)
const windows = [[d0, d0 + 11], [d0 + 2, d0 + 5], [d0 + 4, d0 + 4], [d0 + 9, d0 + 11], [d0 - 3, d0 + 1]]
const pairs = [['a', 'b'], ['b', 'c'], ['c', 'a'], ['a', 'a']]
// 'none': a goal no session completed
const funnels = [
  [['a', 'b'], 60], [['a', 'b', 'c'], 24 * 60], [['c', 'a', 'b'], 3 * 60], [['b', 'b'], 30],
  [['a', 'none', 'b'], 60], [['a', 'b', 'none'], 24 * 60], [['none', 'a'], 60],
] as const

/** every overlap and funnel by days equals the walk of every session (overlap.ts, funnel.ts) */
async function sameAsWalk(t: Test, state: PartitionState, label: string, sliceMs?: number): Promise<number> {
  let wrong = 0
  let nonzero = 0
  for (const [from, to] of windows) {
    const window = { from, to }
    for (const [a, b] of pairs) {
      const q = { kind: 'overlap' as const, site_id: SITE, a, b, window }
      const got = await overlapByDays(state, q, sliceMs)
      const want = overlapPartial([state], q)
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        wrong++
        t.same(got, want, `${label}: overlap ${a}, ${b} over ${from - d0}..${to - d0}`)
      }
      if (want.both > 0) nonzero++
    }
    for (const [steps, minutes] of funnels) {
      const q = { kind: 'funnel' as const, site_id: SITE, steps: [...steps], window_ms: minutes * 60_000, window }
      const got = await funnelByDays(state, q, sliceMs)
      const want = funnelPartial([state], q)
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        wrong++
        t.same(got, want, `${label}: funnel ${steps.join('→')} within ${minutes} min over ${from - d0}..${to - d0}`)
      }
      if ((want.steps[1] ?? 0) > 0) nonzero++
    }
  }
  t.equal(wrong, 0, `${label}: every overlap and funnel equals the walk`)
  return nonzero
}

t.test('overlap and funnels by days equal the walk as shuffled events fold, asked again and again', async (t) => {
  const { state, fold } = folding()
  const events = sessionEvents(1, 4000)
  let asked = 0
  for (let i = 0; i < events.length; i++) {
    fold(events[i])
    // asked every 2 000 events: cached days are read again after late events changed some of them
    if (i % 2000 === 1999 || i === events.length - 1) {
      const nonzero = await sameAsWalk(t, state, `after ${i + 1} events`)
      if (i === events.length - 1) t.ok(nonzero > 20, `${nonzero} answers are not zero`)
      asked++
    }
  }
  t.ok(asked >= 4)
  let indexed = 0
  for (const id of ['a', 'b', 'c']) state.goals.get(id)!.forEachIndexed((_, __, days) => void (days.length === 1 && indexed++))
  t.ok(indexed > 50, `${indexed} sessions indexed on a goal's one day, for their other goals' days`)
})

t.test('a replay folds without spans: the pass links its sessions, and without it the answers are wrong', async (t) => {
  const events = sessionEvents(2, 3000)
  const { state: live, fold } = folding()
  for (const e of events) fold(e)
  // the replay's way: conversions without the sessions' spans (replay.ts)
  const replayed = new PartitionState(0, 1000)
  const index = new GoalIndex()
  for (const g of GOALS) index.add(g)
  const matched: string[] = []
  for (const e of events) {
    const { hi, lo } = hash64(`${e.site_id}\u0000${e.session_id}`)
    const day = dayOf(e.ts, ZONE)
    replayed.countSession(SITE, day, hi, lo)
    matched.length = 0
    index.matches(SITE, e.type === 'pageview' ? e.path! : null, e, matched)
    for (const id of matched) replayed.recordConversion(id, hi, lo, day, e.ts)
  }
  replayed.linkedAcross = true
  let wrong = 0
  for (const [from, to] of windows) {
    const q = { kind: 'overlap' as const, site_id: SITE, a: 'a', b: 'c', window: { from, to } }
    if (JSON.stringify(await overlapByDays(replayed, q)) !== JSON.stringify(overlapPartial([replayed], q))) wrong++
  }
  t.ok(wrong > 0, `unlinked, ${wrong} of ${windows.length} overlaps are wrong: the pass is needed`)
  t.ok(await linkSessionsAcross(replayed, ['a', 'b', 'c']))
  await sameAsWalk(t, replayed, 'replayed and linked')
  t.same(await overlapByDays(replayed, { kind: 'overlap', site_id: SITE, a: 'a', b: 'b', window: { from: d0, to: d0 + 11 } }),
    await overlapByDays(live, { kind: 'overlap', site_id: SITE, a: 'a', b: 'b', window: { from: d0, to: d0 + 11 } }), 'as the live fold counts')
})

t.test('folds between the slices of a query: the answer is the state of its last step', async (t) => {
  const { state, fold } = folding()
  const events = sessionEvents(3, 6000)
  const half = Math.floor(events.length / 2)
  for (let i = 0; i < half; i++) fold(events[i])
  let next = half
  let running = true
  let folded = 0
  // the other half folds ten events per turn of the event loop while the queries walk
  const folder = (async () => {
    while (running && next < events.length) {
      for (let i = 0; i < 10 && next < events.length; i++, folded++) fold(events[next++])
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  })()
  let wrong = 0
  for (let round = 0; round < 10; round++) {
    for (const [from, to] of windows) {
      const q = { kind: 'overlap' as const, site_id: SITE, a: 'a', b: 'b', window: { from, to } }
      // sliceMs 0: a turn between every part of every day's walk
      const got = await overlapByDays(state, q, 0)
      if (JSON.stringify(got) !== JSON.stringify(overlapPartial([state], q))) wrong++
      const f = { kind: 'funnel' as const, site_id: SITE, steps: ['a', 'b', 'c'], window_ms: 12 * HOUR, window: { from, to } }
      const gotF = await funnelByDays(state, f, 0)
      if (JSON.stringify(gotF) !== JSON.stringify(funnelPartial([state], f))) wrong++
    }
  }
  running = false
  await folder
  t.ok(folded > 100, `${folded} events folded while the queries ran`)
  t.equal(wrong, 0, 'every answer equals the walk of the state it ended on')
})

t.test('a settled session on several days that converts a later step on a newer day is counted anew', async (t) => {
  const { state, fold } = folding()
  const at = (day: number, hour: number) => T0 + day * 86_400_000 + hour * HOUR
  const pv = (session: string, path: string, ts: number): LoggedEvent => ({ type: 'pageview', site_id: SITE, session_id: session, path, ts, received_at: ts })
  // days held up to d0 + 5: the sums of sessions whose days all lie before d0 + 4 are kept
  for (let day = 0; day <= 5; day++) {
    fold(pv(`other${day}`, '/a', at(day, 12)))
    fold(pv(`other${day}`, '/b/x', at(day, 13)))
  }
  fold(pv('late', '/a', at(1, 12)))
  fold(pv('late', '/a', at(2, 12)))
  const q = { kind: 'funnel' as const, site_id: SITE, steps: ['a', 'b'], window_ms: 72 * HOUR, window: { from: d0, to: d0 + 5 } }
  t.same((await funnelByDays(state, q)).steps, [7, 6])
  // 61 hours after it entered, on a day after the kept ones: only the side indexes' stamps tell
  fold(pv('late', '/b/x', at(4, 1)))
  const want = funnelPartial([state], q).steps
  t.same(want, [7, 7], 'the session goes on to the second step')
  t.same((await funnelByDays(state, q)).steps, want, 'the kept sum is not used')
})

t.test('warming fills every pair\'s days in one walk a day, and overlaps answer from them exactly', async (t) => {
  const { state, fold } = folding()
  for (const e of sessionEvents(4, 4000)) fold(e)
  t.equal(await warmPairs(state, ['c', 'a', 'b']), 3, 'three pairs')
  // one day of a warmed goal changes: the pairs with it walk that day again
  fold({ type: 'pageview', site_id: SITE, session_id: 'late', path: '/a', ts: T0 + 3 * 86_400_000 + HOUR, received_at: T0 })
  for (const [from, to] of windows) {
    for (const [a, b] of [['a', 'b'], ['b', 'a'], ['c', 'b'], ['a', 'c']]) {
      const q = { kind: 'overlap' as const, site_id: SITE, a, b, window: { from, to } }
      t.same(await overlapByDays(state, q), overlapPartial([state], q), `${a}, ${b} over ${from - d0}..${to - d0}`)
    }
  }
})
