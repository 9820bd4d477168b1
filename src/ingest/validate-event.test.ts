import t from 'tap'
import { EVENT_TYPES } from '../schema/index.js'
import type { IngestContext, SiteInfo } from './context.js'
import { validateEvent } from './validate-event.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = { now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: true }

type Body = Record<string, unknown>
const pageview = (extra: Body = {}): Body => ({ type: 'pageview', site_id: 's1', session_id: 'sess-1', ...extra })

function errorOf(raw: unknown): string | undefined {
  const r = validateEvent(raw, ctx)
  return r.kind === 'reject' ? r.error : undefined
}

function eventOf(raw: unknown): Body {
  const r = validateEvent(raw, ctx)
  if (r.kind === 'reject') throw new Error(`unexpected reject: ${r.error}`)
  return r.event
}

t.test('the body must be an object', async (t) => {
  for (const raw of [null, [], [pageview()], 'pageview', 42, true]) {
    t.equal(errorOf(raw), 'body must be a JSON object', JSON.stringify(raw))
  }
})

t.test('missing required fields are listed in the order type, site_id, session_id', async (t) => {
  t.equal(errorOf({}), 'missing required fields: type, site_id, session_id')
  t.equal(errorOf({ type: 'pageview' }), 'missing required fields: site_id, session_id')
  t.equal(errorOf({ session_id: 'x', site_id: 's1' }), 'missing required fields: type')
  t.equal(errorOf({ session_id: 'x', type: 'pageview' }), 'missing required fields: site_id')
  t.equal(errorOf({ site_id: 's1', type: 'pageview' }), 'missing required fields: session_id')
  // body order does not matter
  t.equal(errorOf({ foo: 1, session_id: '', type: '' }), 'missing required fields: type, site_id, session_id')
})

t.test('null and empty count as missing for required fields', async (t) => {
  t.equal(errorOf(pageview({ site_id: null, session_id: null })), 'missing required fields: site_id, session_id')
  t.equal(errorOf(pageview({ site_id: '', session_id: '' })), 'missing required fields: site_id, session_id')
  t.equal(errorOf(pageview({ type: null })), 'missing required fields: type')
  t.equal(errorOf(pageview({ type: '' })), 'missing required fields: type')
})

t.test('type must be one of the eleven', async (t) => {
  const expected = `type must be one of ${EVENT_TYPES.join(', ')}`
  t.equal(EVENT_TYPES.length, 11)
  for (const type of ['nope', 'PageView', 5, true, {}, ['pageview']]) {
    t.equal(errorOf(pageview({ type })), expected, JSON.stringify(type))
  }
  for (const type of EVENT_TYPES) {
    const r = validateEvent(pageview({ type, event_name: 'signup' }), ctx)
    t.equal(r.kind, 'accept', type)
  }
})

t.test('identifiers follow ^[A-Za-z0-9._:-]+$ and 1..128 characters', async (t) => {
  for (const field of ['site_id', 'session_id', 'visitor_id']) {
    const body = (value: unknown) => pageview(field === 'site_id' ? { site_id: value } : { [field]: value })
    t.equal(errorOf(body('a b')), `${field} must match ^[A-Za-z0-9._:-]+$`, field)
    t.equal(errorOf(body('é')), `${field} must match ^[A-Za-z0-9._:-]+$`, field)
    t.equal(errorOf(body('x'.repeat(129))), `${field} must be at most 128 characters`, field)
    t.equal(errorOf(body(7)), `${field} must be a string`, field)
  }
  t.equal(errorOf(pageview({ session_id: 'A.z_0:9-x'.padEnd(128, 'q') })), undefined, 'every allowed character, 128 long')
  t.equal(errorOf(pageview({ visitor_id: 'v'.repeat(128) })), undefined)
  t.equal(errorOf(pageview({ visitor_id: '' })), 'visitor_id must not be empty')
})

t.test('fields of the wrong type are named with their path', async (t) => {
  const cases: [Body, string][] = [
    [{ url: 5 }, 'url must be a string'],
    [{ path: ['/a'] }, 'path must be a string'],
    [{ user_id: 12 }, 'user_id must be a string'],
    [{ timestamp: 1_700_000_000_000 }, 'timestamp must be an ISO 8601 date and time with Z or an offset'],
    [{ screen: 'big' }, 'screen must be an object'],
    [{ screen: [1024] }, 'screen must be an object'],
    [{ screen: { width: '1024' } }, 'screen.width must be a number'],
    [{ screen: { width: 1, pixel_ratio: true } }, 'screen.pixel_ratio must be a number'],
    [{ utm: { source: 5 } }, 'utm.source must be a string'],
    [{ vitals: { lcp: '2.5s' } }, 'vitals.lcp must be a number'],
    [{ ad_click_ids: { gclid: 5 } }, 'ad_click_ids.gclid must be a string'],
    [{ ad_click_ids: 'gclid' }, 'ad_click_ids must be an object'],
    [{ duration: '5' }, 'duration must be a number'],
    [{ duration: -1 }, 'duration must be at least 0'],
    [{ properties: [] }, 'properties must be an object'],
    [{ properties: { plan: { id: 1 } } }, 'properties.plan must be a string, number, boolean or null'],
    [{ properties: { tags: ['a'] } }, 'properties.tags must be a string, number, boolean or null'],
    [{ event_name: 3 }, 'event_name must be a string'],
    [{ error_stack: {} }, 'error_stack must be a string'],
  ]
  for (const [extra, message] of cases) t.equal(errorOf(pageview(extra)), message, JSON.stringify(extra))
})

t.test('a field path with a slash or tilde is written as sent', async (t) => {
  t.equal(errorOf(pageview({ ad_click_ids: { 'a/b~c': 1 } })), 'ad_click_ids.a/b~c must be a string')
})

t.test('the first problem in schema order is reported, whatever the body order', async (t) => {
  const a = { type: 'pageview', site_id: 's1', session_id: 'x', screen: { width: 'x' }, hostname: 5 }
  const b = { hostname: 5, screen: { width: 'x' }, session_id: 'x', site_id: 's1', type: 'pageview' }
  t.equal(errorOf(a), 'hostname must be a string')
  t.equal(errorOf(b), 'hostname must be a string')
})

t.test('optional fields set to null are absent, top-level and nested', async (t) => {
  const e = eventOf(
    pageview({
      referrer: null,
      user_id: null,
      visitor_id: null,
      timestamp: null,
      duration: null,
      utm: null,
      screen: { width: 1280, height: null },
      vitals: { lcp: 1.2, cls: null },
      ad_click_ids: { gclid: 'g1', fbclid: null },
      properties: { plan: 'pro', coupon: null },
      event_name: null,
      path: null,
    }),
  )
  for (const key of ['referrer', 'user_id', 'visitor_id', 'timestamp', 'duration', 'utm', 'event_name', 'path']) t.notOk(key in e, key)
  t.notOk('properties' in eventOf(pageview({ properties: null })), 'properties: null is absent too')
  t.same(e.screen, { width: 1280 })
  t.same(e.vitals, { lcp: 1.2 })
  t.same(e.ad_click_ids, { gclid: 'g1' })
  t.same(e.properties, { plan: 'pro', coupon: null }, 'null is a value inside properties')
  t.equal(e.ts, NOW, 'a null timestamp is the receive time')
})

t.test('unknown fields are dropped, top-level and nested', async (t) => {
  const e = eventOf(
    pageview({
      foo: { deep: true },
      screen: { width: 390, orientation: 'portrait' },
      utm: { source: 'news', id: 'x' },
      vitals: { lcp: 2, tbt: 3 },
    }),
  )
  t.notOk('foo' in e)
  t.same(e.screen, { width: 390 })
  t.same(e.utm, { source: 'news' })
  t.same(e.vitals, { lcp: 2 })
})

t.test('a __proto__ key from JSON is an unknown field like any other', async (t) => {
  const raw = JSON.parse('{"type":"pageview","site_id":"s1","session_id":"x","__proto__":{"polluted":1},"screen":{"__proto__":{"width":"x"}}}')
  const e = eventOf(raw)
  t.notOk(Object.prototype.hasOwnProperty.call(e, '__proto__'))
  t.same(e.screen, {})
  t.equal(({} as Body).polluted, undefined)
  t.equal(Object.getPrototypeOf(e), Object.prototype)
})

t.test('a client cannot set the server stamps', async (t) => {
  const e = eventOf(pageview({ ts: 1, received_at: 2 }))
  t.equal(e.ts, NOW)
  t.equal(e.received_at, NOW)
})

t.test('an unknown field is dropped before its value could cause a rejection', async (t) => {
  t.equal(errorOf(pageview({ colour: { nested: [1, 2, 3] }, screen: { dpi: 'high' } })), undefined)
})

t.test('properties and ad_click_ids are open-ended', async (t) => {
  const e = eventOf(pageview({ properties: { 'any key': 1, 'with\nnewline': true }, ad_click_ids: { li_fat_id: 'l', zzclid: 'z' } }))
  t.same(e.properties, { 'any key': 1, 'with\nnewline': true })
  t.same(e.ad_click_ids, { li_fat_id: 'l', zzclid: 'z' })
  t.equal(errorOf(pageview({ properties: { 'with\nnewline': {} } })), 'properties.with\nnewline must be a string, number, boolean or null')
})

t.test('custom_event requires event_name', async (t) => {
  const custom = (extra: Body = {}) => pageview({ type: 'custom_event', ...extra })
  t.equal(errorOf(custom()), 'event_name is required for custom_event')
  t.equal(errorOf(custom({ event_name: '' })), 'event_name is required for custom_event')
  t.equal(errorOf(custom({ event_name: null })), 'event_name is required for custom_event')
  t.equal(errorOf(custom({ event_name: 'signup' })), undefined)
  t.equal(errorOf(pageview()), undefined, 'other types do not need it')
})

t.test('an accepted event keeps what it was sent', async (t) => {
  const body = pageview({
    visitor_id: 'v1',
    user_id: 'user@example.com',
    url: 'https://example.com/pricing',
    path: '/pricing',
    hostname: 'example.com',
    title: 'Pricing',
    referrer: 'https://google.com/',
    language: 'de-DE',
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    screen: { width: 1920, height: 1080, viewport_width: 1900, viewport_height: 950, pixel_ratio: 1 },
    utm: { source: 'a', medium: 'b', campaign: 'c', term: 'd', content: 'e' },
    ad_click_ids: { gclid: 'g' },
    duration: 0,
    properties: { n: 1, ok: false, s: 'x' },
    vitals: { lcp: 1, fid: 2, cls: 0.1, fcp: 3, ttfb: 4, inp: 5 },
    error_name: 'TypeError',
    error_message: 'x is undefined',
    error_stack: 'at f (a.js:1:1)',
    provider: 'stripe',
    event_name: 'anything',
  })
  const expected = { ...body, ts: NOW, received_at: NOW }
  t.same(eventOf(structuredClone(body)), expected)
})
