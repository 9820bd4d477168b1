import t from 'tap'
import type { LoggedEvent } from '../schema/index.js'
import type { SessionSummary } from '../schema/index.js'
import { pageOf } from './session-summary.js'
import { toConvertedSession } from '../query/index.js'

const T0 = Date.UTC(2026, 10, 20, 12)
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'

const summary = (over: Partial<SessionSummary>): SessionSummary => ({
  site_id: 's', session_id: 'a', visitor_id: 'v1', user_id: 'u1', first: T0, last: T0 + 183_000,
  entry_page: '/landing', entry_at: T0, exit_page: '/thanks', exit_at: T0 + 120_000, referrer: 'https://google.com/', referrer_at: T0,
  user_agent: IPHONE, screen_width: null, client_at: T0 + 120_000, seen: ['p/landing'], ...over,
})

t.test('converted session fields', async (t) => {
  const c = toConvertedSession(summary({}), T0 + 90_000)
  t.equal(c.session_id, 'a')
  t.equal(c.visitor_id, 'v1')
  t.equal(c.user_id, 'u1')
  t.equal(c.entry_page, '/landing')
  t.equal(c.exit_page, '/thanks')
  t.equal(c.referrer, 'https://google.com/')
  t.equal(c.duration, 183_000)
  t.equal(c.device, 'mobile', 'from the user agent')
  t.equal(c.started_at, new Date(T0).toISOString())
  t.equal(c.timestamp, new Date(T0 + 90_000).toISOString())
})

t.test('a session without pages, referrer or user agent: nulls, and the device from the screen', async (t) => {
  const c = toConvertedSession(summary({ entry_page: null, exit_page: null, referrer: null, user_agent: null, screen_width: 800 }), T0)
  t.equal(c.entry_page, null)
  t.equal(c.exit_page, null)
  t.equal(c.referrer, null)
  t.equal(c.device, 'tablet')
})

t.test('the page of an event: a pageview\'s normalized path, else null', async (t) => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the type checker needs it
  const ev = (over: Partial<LoggedEvent>) => ({ type: 'pageview', site_id: 's', session_id: 'a', ts: T0, received_at: T0, ...over }) as LoggedEvent
  t.equal(pageOf(ev({ path: '/pricing/?x=1' })), '/pricing')
  t.equal(pageOf(ev({})), null, 'a pageview without a path')
  t.equal(pageOf(ev({ type: 'custom_event', path: '/x' })), null)
})
