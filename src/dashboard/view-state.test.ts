import t from 'tap'
import { DEFAULT_DAYS, formatViewState, parseViewState, pickSite } from './view-state.js'
import { backoffMs, liveUrl } from './live.js'

t.test('site and window survive a reload through the address', async (t) => {
  t.same(parseViewState(formatViewState({ siteId: 'shop', days: 7 })), { siteId: 'shop', days: 7 })
  t.same(parseViewState(''), { siteId: null, days: DEFAULT_DAYS })
  t.same(parseViewState('#site=shop&days=13'), { siteId: 'shop', days: DEFAULT_DAYS }, 'only the offered windows')
})

t.test('the site shown is the one asked for when allowed, else the first', async (t) => {
  t.equal(pickSite('b', ['a', 'b']), 'b')
  t.equal(pickSite('z', ['a', 'b']), 'a')
  t.equal(pickSite(null, []), null)
})

t.test('live socket address and reconnection delays', async (t) => {
  t.equal(liveUrl({ protocol: 'https:', host: 'stats.example' }, 'a b', 7), 'wss://stats.example/api/live?site_id=a+b&days=7')
  t.equal(liveUrl({ protocol: 'http:', host: '127.0.0.1:8080' }, 'shop', 1), 'ws://127.0.0.1:8080/api/live?site_id=shop&days=1')
  t.same([0, 1, 2, 5, 9].map(backoffMs), [1000, 2000, 4000, 30_000, 30_000])
})
