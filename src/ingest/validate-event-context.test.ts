import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { DROP_REASONS } from './drop-reason.js'
import { validateEvent } from './validate-event.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const DAY = 86_400_000
const sites = new Map<string, SiteInfo>([
  ['s1', { site_id: 's1', timezone: 'UTC' }],
  ['nulldomain', { site_id: 'nulldomain', domain: null, timezone: 'UTC' }],
  ['shop', { site_id: 'shop', domain: 'example.com', timezone: 'Europe/Berlin' }],
])
const baseCtx: IngestContext = { now: NOW, retentionMs: 90 * DAY, site: (id) => sites.get(id), botFilter: true }

type Body = Record<string, unknown>
const pageview = (extra: Body = {}): Body => ({ type: 'pageview', site_id: 's1', session_id: 'sess-1', ...extra })

function errorOf(raw: unknown, ctx: Partial<IngestContext> = {}): string | undefined {
  const r = validateEvent(raw, { ...baseCtx, ...ctx })
  return r.kind === 'reject' ? r.error : undefined
}

function eventOf(raw: unknown, ctx: Partial<IngestContext> = {}): Body {
  const r = validateEvent(raw, { ...baseCtx, ...ctx })
  if (r.kind === 'reject') throw new Error(`unexpected reject: ${r.error}`)
  return r.event
}

const iso = (ms: number) => new Date(ms).toISOString()
const NOT_ISO = 'timestamp must be an ISO 8601 date and time with Z or an offset'
const FUTURE = 'timestamp is more than 5 minutes in the future'

t.test('no timestamp: the event time is the receive time', async (t) => {
  const e = eventOf(pageview())
  t.equal(e.ts, NOW)
  t.equal(e.received_at, NOW)
  t.notOk('timestamp' in e)
})

t.test('a timestamp becomes ts (epoch ms) and is not kept as text', async (t) => {
  const e = eventOf(pageview({ timestamp: '2026-11-22T13:30:00+02:00' }))
  t.equal(e.ts, Date.UTC(2026, 10, 22, 11, 30))
  t.equal(e.received_at, NOW)
  t.notOk('timestamp' in e)
  t.equal(eventOf(pageview({ timestamp: '2026-11-22T06:30:00-05:00' })).ts, Date.UTC(2026, 10, 22, 11, 30))
  t.equal(eventOf(pageview({ timestamp: '2026-11-22T11:30:00.250Z' })).ts, Date.UTC(2026, 10, 22, 11, 30, 0, 250))
})

t.test('a timestamp that is not an ISO 8601 date and time with a zone', async (t) => {
  for (const timestamp of ['2026-11-22', '2026-11-22T11:00:00', 'yesterday', '', '2026-11-31T10:00:00Z', 1763812800000, true, {}]) {
    t.equal(errorOf(pageview({ timestamp })), NOT_ISO, JSON.stringify(timestamp))
  }
})

t.test('up to 5 minutes in the future is accepted, not beyond', async (t) => {
  const limit = NOW + 5 * 60_000
  t.equal(eventOf(pageview({ timestamp: iso(limit) })).ts, limit)
  t.equal(errorOf(pageview({ timestamp: iso(limit + 1) })), FUTURE)
  t.equal(errorOf(pageview({ timestamp: '2026-11-22T14:06:00+02:00' })), FUTURE, '12:06 UTC written with an offset')
  t.equal(errorOf(pageview({ timestamp: '2026-11-22T14:05:00+02:00' })), undefined, '12:05 UTC written with an offset')
})

t.test('no older than the retention', async (t) => {
  const oldest = NOW - 90 * DAY
  t.equal(eventOf(pageview({ timestamp: iso(oldest) })).ts, oldest)
  t.equal(errorOf(pageview({ timestamp: iso(oldest - 1) })), 'timestamp is older than the retention of 90 days')
  t.equal(errorOf(pageview({ timestamp: iso(NOW - 31 * DAY) }), { retentionMs: 30 * DAY }), 'timestamp is older than the retention of 30 days')
  t.equal(errorOf(pageview({ timestamp: iso(NOW - 2 * DAY) }), { retentionMs: DAY }), 'timestamp is older than the retention of 1 day')
  t.equal(errorOf(pageview({ timestamp: iso(NOW - 2 * DAY) }), { retentionMs: 36 * 3_600_000 }), 'timestamp is older than the retention of 36 hours')
  t.equal(errorOf(pageview({ timestamp: '1999-01-01T00:00:00Z' })), 'timestamp is older than the retention of 90 days')
})

t.test('unknown site_id', async (t) => {
  t.equal(errorOf(pageview({ site_id: 'nope' })), 'unknown site_id nope')
  t.equal(errorOf(pageview({ site_id: 'S1' })), 'unknown site_id S1', 'site ids are case-sensitive')
})

t.test('Origin: a site without a domain takes any', async (t) => {
  t.equal(errorOf(pageview(), { origin: 'https://anything.example' }), undefined)
  t.equal(errorOf(pageview({ site_id: 'nulldomain' }), { origin: 'https://anything.example' }), undefined)
})

t.test('Origin: no header (backend callers) is never refused', async (t) => {
  const shop = pageview({ site_id: 'shop' })
  t.equal(errorOf(shop), undefined)
  t.equal(errorOf(pageview({ site_id: 'shop' }), { origin: undefined }), undefined)
  t.equal(errorOf(pageview({ site_id: 'shop' }), { origin: '' }), undefined, 'an empty header counts as none')
})

t.test('Origin: the domain and its subdomains', async (t) => {
  for (const origin of ['https://example.com', 'http://example.com:8080', 'https://shop.example.com', 'https://a.b.example.com', 'https://WWW.Example.com']) {
    t.equal(errorOf(pageview({ site_id: 'shop' }), { origin }), undefined, origin)
  }
})

t.test('Origin: other hosts, null and malformed origins are refused naming both', async (t) => {
  for (const origin of ['https://badexample.com', 'https://example.com.evil.net', 'https://other.org', 'null', 'garbage', 'https://']) {
    t.equal(errorOf(pageview({ site_id: 'shop' }), { origin }), `Origin ${origin} is not allowed for site shop`, origin)
  }
  const long = 'https://' + 'x'.repeat(5000) + '.org'
  t.equal(errorOf(pageview({ site_id: 'shop' }), { origin: long })!.length < 400, true, 'a huge Origin is not echoed whole')
})

t.test('bots are dropped with a reason when the filter is on', async (t) => {
  t.same(DROP_REASONS, ['bot'])
  const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
  const googlebotSmartphone =
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
  const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'
  for (const ua of [googlebot, googlebotSmartphone, 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'curl/8.5.0']) {
    for (let i = 0; i < 2; i++) {
      const r = validateEvent(pageview({ user_agent: ua }), baseCtx)
      t.equal(r.kind, 'drop', `${ua} (${i ? 'remembered' : 'first'})`)
      if (r.kind === 'drop') {
        t.equal(r.reason, 'bot')
        t.equal(r.event.user_agent, ua, 'the dropped event is still the validated record')
        t.equal(r.event.ts, NOW)
      }
    }
  }
  t.equal(validateEvent(pageview({ user_agent: googlebot }), { ...baseCtx, botFilter: false }).kind, 'accept', 'filter off')
  t.equal(validateEvent(pageview({ user_agent: chrome }), baseCtx).kind, 'accept', 'a browser')
  t.equal(validateEvent(pageview(), baseCtx).kind, 'accept', 'no user_agent')
})

t.test('many distinct user agents: remembered answers stay right', async (t) => {
  for (let i = 0; i < 600; i++) validateEvent(pageview({ user_agent: `Mozilla/5.0 (X11; Linux x86_64) Firefox/${i}.0` }), baseCtx)
  t.equal(validateEvent(pageview({ user_agent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }), baseCtx).kind, 'drop')
  t.equal(validateEvent(pageview({ user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/1.0' }), baseCtx).kind, 'accept')
})

t.test('an invalid bot event is rejected, not dropped', async (t) => {
  const r = validateEvent(pageview({ user_agent: 'Googlebot/2.1', site_id: 'nope' }), baseCtx)
  t.same(r, { kind: 'reject', error: 'unknown site_id nope' })
})

t.test('path is taken from url when absent', async (t) => {
  t.equal(eventOf(pageview({ url: 'https://example.com/pricing?plan=pro#faq' })).path, '/pricing')
  t.equal(eventOf(pageview({ url: 'https://example.com' })).path, '/')
  t.equal(eventOf(pageview({ url: '/docs/intro?x=1' })).path, '/docs/intro', 'a relative URL is a path')
  t.equal(eventOf(pageview({ url: 'https://example.com/a', path: null })).path, '/a', 'null path is absent')
  t.notOk('path' in eventOf(pageview({ url: 'not a url' })))
  t.notOk('path' in eventOf(pageview()))
})

t.test('a path that was sent is kept as given', async (t) => {
  t.equal(eventOf(pageview({ url: 'https://example.com/a', path: '/Pricing/?x=1' })).path, '/Pricing/?x=1')
  t.equal(eventOf(pageview({ url: 'https://example.com/a', path: '' })).path, '')
})

t.test('checks run in a fixed order', async (t) => {
  // shape before time before site before Origin
  const bad = { site_id: 'nope', timestamp: 'later', hostname: 5 }
  t.equal(errorOf(pageview(bad), { origin: 'https://evil.org' }), 'hostname must be a string')
  t.equal(errorOf(pageview({ site_id: 'nope', timestamp: 'later' })), NOT_ISO)
  t.equal(errorOf(pageview({ site_id: 'nope' }), { origin: 'https://evil.org' }), 'unknown site_id nope')
})

t.test("country: the client's when the body names none; the body's wins; asked only when needed", async (t) => {
  let asked = 0
  const clientCountry = () => (asked++, 'US')
  t.equal(eventOf(pageview(), { clientCountry }).country, 'US')
  t.equal(eventOf(pageview({ country: null }), { clientCountry }).country, 'US', 'null counts as absent')
  t.equal(asked, 2)
  t.equal(eventOf(pageview({ country: 'DE' }), { clientCountry }).country, 'DE', "the body's country wins")
  t.equal(asked, 2, 'a body that names its country costs no lookup')
  t.notOk('country' in eventOf(pageview(), { clientCountry: () => null }), 'unknown: the member stays absent')
  t.notOk('country' in eventOf(pageview()), 'lookup off: absent')
  const r = validateEvent(pageview({ user_agent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' }), { ...baseCtx, clientCountry })
  t.equal(r.kind, 'drop')
  t.equal(asked, 2, 'a dropped bot costs no lookup')
})

t.test('country: two upper-case letters or a 400 naming it', async (t) => {
  for (const country of ['de', 'DEU', 'D', 5, '', 'D1', true, { code: 'DE' }]) {
    t.match(errorOf(pageview({ country })), /^country /, JSON.stringify(country))
  }
  t.equal(errorOf(pageview({ country: 'de' })), 'country must match ^[A-Z]{2}$')
})
