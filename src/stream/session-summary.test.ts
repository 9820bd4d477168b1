import t from 'tap'
import type { LoggedEvent } from '../schema/event.js'
import { foldSummary, newSummary, pageOf, toConvertedSession } from './session-summary.js'

const T0 = Date.UTC(2026, 10, 20, 12)
const ev = (over: Partial<LoggedEvent>): LoggedEvent =>
  ({ type: 'pageview', site_id: 's', session_id: 'a', ts: T0, received_at: T0, ...over }) as LoggedEvent

const session = [
  ev({ path: '/landing?utm=1', ts: T0, referrer: 'https://google.com/' }),
  ev({ path: '/pricing/', ts: T0 + 60_000, referrer: 'https://bing.com/' }),
  ev({ type: 'custom_event', event_name: 'signup', ts: T0 + 90_000 }),
  ev({ path: '/thanks', ts: T0 + 120_000, user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1' }),
  ev({ type: 'pageleave', ts: T0 + 183_000, visitor_id: 'v1', user_id: 'u1' }),
]

function foldAll(events: LoggedEvent[]) {
  const s = newSummary(events[0]!)
  for (const e of events) foldSummary(s, e, pageOf(e))
  return s
}

t.test('a summary is a join: any order, any repetition, same result', async (t) => {
  const inOrder = foldAll(session)
  const reversed = foldAll([...session].reverse())
  const twice = foldAll([...session, ...session])
  t.same(reversed, inOrder)
  t.same(twice, inOrder)
  t.equal(inOrder.entry_page, '/landing')
  t.equal(inOrder.exit_page, '/thanks')
  t.equal(inOrder.referrer, 'https://google.com/', 'the earliest event carrying a referrer')
  t.equal(inOrder.last - inOrder.first, 183_000)
})

t.test('folding an event already folded reports no change', async (t) => {
  const s = foldAll(session)
  for (const e of session) t.notOk(foldSummary(s, e, pageOf(e)))
})

t.test('converted session fields', async (t) => {
  const s = foldAll(session)
  const c = toConvertedSession(s, T0 + 90_000)
  t.equal(c.session_id, 'a')
  t.equal(c.visitor_id, 'v1')
  t.equal(c.user_id, 'u1')
  t.equal(c.duration, 183_000)
  t.equal(c.device, 'mobile', 'from the user agent of the earliest event carrying one')
  t.equal(c.started_at, new Date(T0).toISOString())
  t.equal(c.timestamp, new Date(T0 + 90_000).toISOString())
})

t.test('a session without pageviews has null pages and device from the screen', async (t) => {
  const s = newSummary(ev({ type: 'custom_event' }))
  foldSummary(s, ev({ type: 'custom_event', event_name: 'x', screen: { width: 800 } }), null)
  const c = toConvertedSession(s, T0)
  t.equal(c.entry_page, null)
  t.equal(c.exit_page, null)
  t.equal(c.referrer, null)
  t.equal(c.device, 'tablet')
})
