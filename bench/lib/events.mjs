/**
 * Request bodies like the browser client sends (API.md §7: no timestamp, the server's receive
 * time is the event time), over a fixed set of sessions, with what the service must count from
 * them once every body was sent at least once.
 */

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
]
const SCREENS = [
  { width: 1920, height: 1080, viewport_width: 1903, viewport_height: 961, pixel_ratio: 1 },
  { width: 1440, height: 900, viewport_width: 1440, viewport_height: 789, pixel_ratio: 2 },
  { width: 390, height: 844, viewport_width: 390, viewport_height: 664, pixel_ratio: 3 },
  { width: 412, height: 915, viewport_width: 412, viewport_height: 783, pixel_ratio: 2.625 },
]
const REFERRERS = ['https://www.google.com/', 'https://duckduckgo.com/', 'https://news.ycombinator.com/', null, null]
/** a shop's pages; the goal path is visited by a known subset of sessions */
const PAGES = ['/', '/products', '/products/espresso-grinder', '/products/milk-jug', '/blog/latte-art', '/pricing', '/cart']
export const GOAL_PATH = '/checkout/complete'
export const GOAL_EVENT = 'signup'
export const HOST = 'shop.example'

/**
 * The goals the ingest bench creates, so the stream processor matches as it would in use, each
 * with the test the bench uses to count the conversions it expects.
 */
export const BENCH_GOALS = [
  { body: { goal_type: 'pageview', match_path: GOAL_PATH }, matches: (e) => e.type === 'pageview' && e.path === GOAL_PATH },
  { body: { goal_type: 'pageview', match_path: '/blog/**' }, matches: (e) => e.type === 'pageview' && e.path.startsWith('/blog/') },
  { body: { goal_type: 'custom_event', match_event: GOAL_EVENT }, matches: (e) => e.type === 'custom_event' && e.event_name === GOAL_EVENT },
]

function pageview(siteId, session, path, k) {
  const referrer = REFERRERS[k % REFERRERS.length]
  return {
    type: 'pageview',
    site_id: siteId,
    session_id: session.id,
    visitor_id: session.visitor,
    url: `https://${HOST}${path}`,
    path,
    hostname: HOST,
    title: `${path === '/' ? 'Home' : path.slice(1).replace(/[/-]/g, ' ')} | Shop`,
    ...(referrer ? { referrer } : {}),
    language: 'en-US',
    user_agent: USER_AGENTS[session.n % USER_AGENTS.length],
    screen: SCREENS[session.n % SCREENS.length],
  }
}

function custom(siteId, session, name) {
  return {
    type: 'custom_event',
    site_id: siteId,
    session_id: session.id,
    visitor_id: session.visitor,
    event_name: name,
    url: `https://${HOST}/signup`,
    path: '/signup',
    hostname: HOST,
    language: 'en-US',
    user_agent: USER_AGENTS[session.n % USER_AGENTS.length],
    screen: SCREENS[session.n % SCREENS.length],
    properties: { plan: session.n % 2 ? 'pro' : 'free' },
  }
}

const sessionOf = (prefix, n) => ({
  n,
  id: `${prefix}${n.toString(36).padStart(4, '0')}-${((n * 2654435761) >>> 0).toString(16)}`,
  visitor: `v-${((n * 40503 + 7) >>> 0).toString(16)}`,
})

/**
 * `perSession` events for each of `sessions` sessions, interleaved so that consecutive requests
 * belong to different sessions. Every 7th session reaches the goal page, every 11th signs up.
 * Returns the bodies (JSON strings) and the counts the service must report for them
 * (`conversions[i]` for `BENCH_GOALS[i]`).
 */
export function singleEventBodies(siteId, sessions, perSession = 3) {
  const bodies = []
  const converted = BENCH_GOALS.map(() => new Set())
  for (let k = 0; k < perSession; k++) {
    for (let n = 0; n < sessions; n++) {
      const s = sessionOf('s', n)
      let e
      if (k === perSession - 1 && n % 7 === 0) e = pageview(siteId, s, GOAL_PATH, k)
      else if (k === perSession - 1 && n % 11 === 0) e = custom(siteId, s, GOAL_EVENT)
      else e = pageview(siteId, s, PAGES[(n + k) % PAGES.length], k)
      BENCH_GOALS.forEach((g, i) => g.matches(e) && converted[i].add(s.id))
      bodies.push(JSON.stringify(e))
    }
  }
  return { bodies, expected: { sessions, conversions: converted.map((c) => c.size) } }
}

/** `batches` bodies of `batchSize` pageviews each, over `sessions` sessions (API.md §1 batches). */
export function batchBodies(siteId, sessions, batchSize, batches) {
  const bodies = []
  const seen = new Set()
  for (let b = 0; b < batches; b++) {
    const events = []
    for (let i = 0; i < batchSize; i++) {
      const n = (b * batchSize + i) % sessions
      const s = sessionOf('b', n)
      seen.add(s.id)
      events.push(pageview(siteId, s, PAGES[(n + b) % PAGES.length], b))
    }
    bodies.push(JSON.stringify(events))
  }
  return { bodies, expected: { sessions: seen.size, events: batches * batchSize } }
}
