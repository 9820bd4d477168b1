import t from 'tap'
import { GoalIndex, PartitionState } from '../stream/index.js'
import { decodeCursor, goalSessions, totalSessions, conversions, suggestions } from './queries.js'
import { eventKey, type Goal, type Site } from '../schema/index.js'
import { hash64, initHash } from '../sketch/index.js'

t.before(initHash)

const site: Site = { site_id: 's', domain: null, timezone: 'UTC', created_at: '' }

t.test('total sessions: partitions add up, days union, the cached past follows late events', async (t) => {
  const parts = [new PartitionState(0, 8), new PartitionState(1, 8)]
  // session k lives in partition k % 2 and is seen on days 10 and 11
  for (let k = 0; k < 6; k++) {
    parts[k % 2].countSession('s', 10, 0, k)
    parts[k % 2].countSession('s', 11, 0, k)
  }
  const w = { from: 9, to: 12 }
  t.equal(totalSessions(parts, 's', w), 6, 'a session on two days counts once')
  t.equal(totalSessions(parts, 's', w), 6, 'same answer from the cache')
  parts[0].countSession('s', 10, 0, 100) // a late event on a past day
  t.equal(totalSessions(parts, 's', w), 7, 'a change to a past day invalidates the cached union')
  parts[1].countSession('s', 12, 0, 101) // today
  t.equal(totalSessions(parts, 's', w), 8)
  t.equal(totalSessions(parts, 's', { from: 12, to: 12 }), 1, 'one-day window')
  t.equal(totalSessions(parts, 's', { from: 11, to: 12 }), 7, 'another window is computed afresh')
  // past the exact threshold (8 per partition-day here) the union turns into HyperLogLog
  // (HyperLogLog needs well-mixed hashes, as hash64 gives)
  for (let k = 0; k < 2000; k++) {
    const h = hash64(`late-${k}`)
    parts[0].countSession('s', 9, h.hi, h.lo)
  }
  const n = totalSessions(parts, 's', w)
  t.ok(Math.abs(n - 2008) / 2008 < 0.03, `≈2008 sessions, got ${n}`)
})

t.test('conversions sum over partitions; suggestions merge them', async (t) => {
  const parts = [new PartitionState(0, 8), new PartitionState(1, 8)]
  const DAY = 86_400_000
  parts[0].recordConversion('g', 0, 1, 20, 20 * DAY + 1000)
  parts[1].recordConversion('g', 0, 2, 20, 20 * DAY + 2000)
  parts[1].recordConversion('g', 0, 2, 21, 21 * DAY + 2000)
  t.equal(conversions(parts, 'g', { from: 20, to: 21 }), 2)
  t.equal(conversions(parts, 'g', { from: 21, to: 21 }), 1)
  const now = 21 * DAY
  parts[0].site('s').paths.add('/pricing', 1, 21)
  parts[1].site('s').paths.add('/pricing', 1, 21)
  parts[1].site('s').paths.add('/about', 1, 21)
  parts[1].site('s').paths.add('/docs', 1, 21)
  const out = suggestions(parts, site, 'path', '/', 2, 90, now)
  t.same(out.suggestions, [{ value: '/pricing', sessions: 2 }, { value: '/about', sessions: 1 }])
  t.same(suggestions(parts, site, 'path', '/d', 20, 90, now).suggestions, [{ value: '/docs', sessions: 1 }])
})

t.test('a listing that crosses midnight keeps the window of its first page: no row skipped or repeated', async (t) => {
  const DAY = 86_400_000
  const midnight = Date.UTC(2026, 10, 25)
  const goal: Goal = { id: 'g', site_id: 's', name: 'Buy', goal_type: 'custom_event', match_event: 'buy', created_at: '' }
  const goals = new GoalIndex()
  goals.add(goal)
  const state = new PartitionState(0, 8)
  const buy = (session: string, ts: number) => {
    const h = hash64(eventKey('s', session))
    state.fold({ type: 'custom_event', event_name: 'buy', site_id: 's', session_id: session, ts, received_at: ts }, h.hi, h.lo, site, goals)
  }
  // six purchases on the day before midnight, two the day before that, three after midnight
  for (let i = 0; i < 6; i++) buy(`d${i}`, midnight - DAY + (i + 1) * 3_600_000)
  for (let i = 0; i < 2; i++) buy(`old${i}`, midnight - 2 * DAY + (i + 1) * 3_600_000)
  for (let i = 0; i < 3; i++) buy(`new${i}`, midnight + (i + 1) * 60_000)
  const lookup = async (_p: number, hks: string[]) => hks.map((hk) => state.summaries.get(hk))

  const first = await goalSessions([state], lookup, goal, site, 1, 2, null, midnight - 1000)
  t.same(first.sessions.map((r) => r.session_id), ['d5', 'd4'])
  t.equal(first.conversions, 6)
  const seen = first.sessions.map((r) => r.session_id)
  let cursor = first.next_cursor
  // the rest is read after midnight, when "today" is another day
  for (let page = 0; cursor !== null && page < 10; page++) {
    const decoded = decodeCursor(cursor)
    const next = await goalSessions([state], lookup, goal, site, 1, 2, decoded, midnight + 5 * 60_000)
    t.equal(next.conversions, 6, 'every page counts the same window')
    seen.push(...next.sessions.map((r) => r.session_id))
    cursor = next.next_cursor
  }
  t.same(seen, ['d5', 'd4', 'd3', 'd2', 'd1', 'd0'], 'the day the listing started on, each session once')
  const fresh = await goalSessions([state], lookup, goal, site, 1, 10, null, midnight + 5 * 60_000)
  t.same(fresh.sessions.map((r) => r.session_id), ['new2', 'new1', 'new0'], 'a new listing is on the new day')
})
