import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { validateEvent } from './validate-event.js'

// docs/api.md §1: with an Origin (a browser page) and no user_agent in the body, the User-Agent header is
// the event's user_agent; without an Origin (a backend caller) only the body counts.
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = { now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: true }
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const ORIGIN = 'https://example.com'

type Body = Record<string, unknown>
const pageview = (extra: Body = {}): Body => ({ type: 'pageview', site_id: 's1', session_id: 'sess-1', ...extra })

function agentOf(raw: Body, extra: Partial<IngestContext>): unknown {
  const r = validateEvent(raw, { ...ctx, ...extra })
  if (r.kind === 'reject') throw new Error(`unexpected reject: ${r.error}`)
  return (r.event as unknown as Body).user_agent
}

t.test('with an Origin and no user_agent in the body, the header is taken', async (t) => {
  t.equal(agentOf(pageview(), { origin: ORIGIN, userAgent: CHROME }), CHROME)
  t.equal(agentOf(pageview({ user_agent: null }), { origin: ORIGIN, userAgent: CHROME }), CHROME, 'null counts as absent')
})

t.test('a user_agent in the body wins over the header', async (t) => {
  t.equal(agentOf(pageview({ user_agent: FIREFOX }), { origin: ORIGIN, userAgent: CHROME }), FIREFOX)
  t.equal(agentOf(pageview({ user_agent: '' }), { origin: ORIGIN, userAgent: CHROME }), '', 'an empty string is what the body says')
})

t.test('without an Origin the header is ignored', async (t) => {
  t.equal(agentOf(pageview(), { userAgent: CHROME }), undefined)
  t.equal(agentOf(pageview(), { origin: '', userAgent: CHROME }), undefined, 'an empty Origin is no Origin')
  t.equal(agentOf(pageview({ user_agent: FIREFOX }), { userAgent: CHROME }), FIREFOX)
})

t.test('with an Origin but no User-Agent header the event has none', async (t) => {
  t.equal(agentOf(pageview(), { origin: ORIGIN }), undefined)
})

t.test('a bot header drops the event like a bot body would', async (t) => {
  const r = validateEvent(pageview(), { ...ctx, origin: ORIGIN, userAgent: GOOGLEBOT })
  t.equal(r.kind, 'drop')
  if (r.kind === 'drop') t.equal(r.reason, 'bot')
  t.equal(validateEvent(pageview(), { ...ctx, userAgent: GOOGLEBOT }).kind, 'accept', 'without Origin a backend caller is not judged by its own agent')
  t.equal(validateEvent(pageview(), { ...ctx, origin: ORIGIN, userAgent: GOOGLEBOT, botFilter: false }).kind, 'accept', 'filter off')
})

t.test('a long header is cut to 2048 characters like a body field', async (t) => {
  const long = CHROME + ' x'.repeat(2000)
  t.equal(agentOf(pageview(), { origin: ORIGIN, userAgent: long }), long.slice(0, 2048))
})
