// docs/api.md §1 — a browser beacon (it carries Origin) without user_agent takes the User-Agent header;
// backend callers (no Origin) keep only what their body says. Device, browser, OS and the bot filter
// follow the header, seen through the goals API.
import t from 'tap'
import {
  UA, allSessions, createGoal, createSite, goalIn, postEvent, settledGoals, startServer, uid,
} from './helpers/index.js'

const server = await startServer({ t })
const site = (await createSite(server)).site_id
const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/ua/**' })
const ORIGIN = 'https://shop.example'

const beacon = (sessionId: string, path: string, extra: Record<string, unknown> = {}) =>
  ({ type: 'pageview', site_id: site, session_id: sessionId, url: `${ORIGIN}${path}`, ...extra })

const browser = uid('browser')
const backend = uid('backend')
const crawler = uid('crawler')
const bodyWins = uid('body')

t.test('each request is acknowledged', async (t) => {
  const replies = await Promise.all([
    postEvent(server, beacon(browser, '/ua/browser'), { origin: ORIGIN, 'user-agent': UA.iphone }),
    postEvent(server, beacon(backend, '/ua/backend'), { 'user-agent': UA.iphone }),
    postEvent(server, beacon(crawler, '/ua/crawler'), { origin: ORIGIN, 'user-agent': UA.googlebot }),
    postEvent(server, beacon(bodyWins, '/ua/body', { user_agent: UA.firefoxWindows }), { origin: ORIGIN, 'user-agent': UA.iphone }),
  ])
  for (const r of replies) t.equal(r.status, 202, r.text)
})

const batchBrowser = uid('batch-browser')
const batchCrawler = uid('batch-crawler')

t.test('a batch with Origin follows the same rule', async (t) => {
  const send = (sessionId: string, agent: string) => server.request('POST', '/api/events', {
    token: server.adminToken,
    body: [beacon(sessionId, '/ua/batch')],
    headers: { origin: ORIGIN, 'user-agent': agent },
  })
  const browserReply = await send(batchBrowser, UA.androidPhone)
  t.equal(browserReply.status, 202, browserReply.text)
  const crawlerReply = await send(batchCrawler, UA.googlebot)
  t.equal(crawlerReply.status, 202, crawlerReply.text)
  t.same(crawlerReply.json, { status: 'ok', accepted: 1 }, 'a bot is acknowledged and counted as accepted')
})

t.test('the header decides device, browser and OS only for the browser beacon', async (t) => {
  const answer = await settledGoals(server, site, 1, (a) => goalIn(a, goal.id)?.conversions === 4)
  t.equal(goalIn(answer, goal.id)?.conversions, 4, 'the crawler beacons are not counted')
  t.equal(answer.total_sessions, 4)
  const rows = new Map((await allSessions(server, goal.id, 1)).map((r) => [r.session_id, r]))
  t.notOk(rows.has(crawler), 'no session row for the crawler')
  t.notOk(rows.has(batchCrawler), 'no session row for the crawler in a batch')
  t.match(rows.get(batchBrowser), { device: 'mobile', browser: 'Chrome', os: 'Android' }, 'a batch with Origin: from the header')
  t.match(rows.get(browser), { device: 'mobile', browser: 'Safari', os: 'iOS' }, 'from the header')
  t.match(rows.get(backend), { device: null, browser: null, os: null }, 'a backend caller keeps only its body')
  t.match(rows.get(bodyWins), { device: 'desktop', browser: 'Firefox', os: 'Windows' }, 'the body wins over the header')
})
