import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { validateEvent } from './validate-event.js'

// A guard against accidental slowness on the ingest hot path, not a benchmark. Typical runs take
// about 1 µs per event (plus ~1.6 µs for JSON.parse); the bound leaves room for a busy machine and
// coverage instrumentation, yet catches, say, a user-agent parse per event (~100 µs each).
const BOUND_NS_PER_EVENT = 200_000

const site: SiteInfo = { site_id: 'shop', domain: 'example.com', timezone: 'Europe/Berlin' }
const ctx: IngestContext = {
  now: Date.UTC(2026, 10, 22, 12),
  retentionMs: 90 * 86_400_000,
  site: (id) => (id === site.site_id ? site : undefined),
  origin: 'https://www.example.com',
  botFilter: true,
}

const body = JSON.stringify({
  type: 'pageview',
  site_id: 'shop',
  session_id: 'k3j4h5k6j7h8g9f0',
  visitor_id: 'v-8f7e6d5c4b3a2910',
  url: 'https://www.example.com/blog/how-we-built-it?utm_source=news',
  path: '/blog/how-we-built-it',
  hostname: 'www.example.com',
  title: 'How we built it',
  referrer: 'https://news.ycombinator.com/',
  language: 'en-US',
  user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  screen: { width: 1728, height: 1117, viewport_width: 1512, viewport_height: 866, pixel_ratio: 2 },
  utm: { source: 'news' },
})

t.test('a typical browser pageview validates in microseconds', async (t) => {
  const n = 20_000
  const events = Array.from({ length: n }, () => JSON.parse(body) as unknown)
  let accepted = 0
  const start = process.hrtime.bigint()
  for (const raw of events) if (validateEvent(raw, ctx).kind === 'accept') accepted++
  const nsPerEvent = Number(process.hrtime.bigint() - start) / n
  t.equal(accepted, n)
  t.ok(nsPerEvent < BOUND_NS_PER_EVENT, `${nsPerEvent.toFixed(0)} ns per event`)
})
