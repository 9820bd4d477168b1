// docs/api.md §1 — POST /api/event, one event, against the real server over HTTP.
import t from 'tap'
import {
  UA, createGoal, createSite, customEvent, daysAgo, goalIn, hasCors, isError, minutesAgo, namesField, pageview,
  postEvent, sessionsPage, settledGoals, startServer, uid, type EventBody,
} from './helpers/index.js'

const server = await startServer({ t })
const site = (await createSite(server)).site_id
const fresh = (path = '/') => pageview(site, uid('s'), path)

t.test('a valid event is acknowledged with 202 {"status":"ok"}', async (t) => {
  const reply = await postEvent(server, fresh('/hello'))
  t.equal(reply.status, 202, reply.text)
  t.same(reply.json, { status: 'ok' })
  t.strictSame(Object.keys(reply.json ?? {}), ['status'], 'nothing else in the body')
  t.match(reply.headers.get('content-type') ?? '', /application\/json/)
  hasCors(t, reply)
})

t.test('the smallest valid event (type, site_id, session_id) is accepted', async (t) => {
  const reply = await postEvent(server, { type: 'pageview', site_id: site, session_id: uid('s') })
  t.equal(reply.status, 202, reply.text)
})

t.test('every one of the eleven types is accepted', async (t) => {
  const types = ['pageview', 'pageleave', 'custom_event', 'web_vitals', 'external_link', 'error', 'payment',
    'identify', 'button_click', 'form_submit', 'copy']
  for (const type of types) {
    const reply = await postEvent(server, { type, site_id: site, session_id: uid('s'), event_name: 'x' })
    t.equal(reply.status, 202, `${type}: ${reply.text}`)
  }
})

t.test('missing required fields: every missing one, in the order type, site_id, session_id', async (t) => {
  const cases: [EventBody, string][] = [
    [{}, 'missing required fields: type, site_id, session_id'],
    [{ type: 'pageview' }, 'missing required fields: site_id, session_id'],
    [{ site_id: site, session_id: 'abc' }, 'missing required fields: type'],
    [{ type: 'pageview', session_id: 'abc' }, 'missing required fields: site_id'],
    [{ type: 'pageview', site_id: site }, 'missing required fields: session_id'],
    [{ session_id: 'abc' }, 'missing required fields: type, site_id'],
    [{ site_id: site }, 'missing required fields: type, session_id'],
    [{ type: '', site_id: '', session_id: '' }, 'missing required fields: type, site_id, session_id'],
    [{ type: 'pageview', site_id: '', session_id: 'abc' }, 'missing required fields: site_id'],
    [{ type: null, site_id: site, session_id: null }, 'missing required fields: type, session_id'],
    [{ type: 'pageview', site_id: null, session_id: 'abc', path: '/x' }, 'missing required fields: site_id'],
  ]
  for (const [body, message] of cases) {
    const reply = await postEvent(server, body)
    isError(t, reply, 400, message, JSON.stringify(body))
    hasCors(t, reply)
  }
})

t.test('a body that is not a JSON object is refused with 400', async (t) => {
  for (const body of ['{"type":"pageview",', 'not json at all', '', '[]', JSON.stringify([fresh()]), '"pageview"', '42', 'null', 'true']) {
    const reply = await postEvent(server, body)
    isError(t, reply, 400, undefined, `body ${JSON.stringify(body).slice(0, 40)}`)
    hasCors(t, reply)
  }
})

t.test('a field of the wrong type is refused with a message naming it', async (t) => {
  const props33 = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))
  const cases: [string | string[], EventBody][] = [
    ['type', { type: 5 }],
    ['session_id', { session_id: 123 }],
    ['site_id', { site_id: 42 }],
    ['visitor_id', { visitor_id: 7 }],
    ['user_id', { user_id: 5 }],
    ['timestamp', { timestamp: Date.now() }],
    ['url', { url: 5 }],
    ['path', { path: ['/'] }],
    ['hostname', { hostname: 5 }],
    ['title', { title: {} }],
    ['referrer', { referrer: true }],
    ['language', { language: 5 }],
    ['user_agent', { user_agent: 5 }],
    ['screen', { screen: 'big' }],
    [['screen', 'width'], { screen: { width: 'wide' } }],
    [['screen', 'pixel_ratio'], { screen: { pixel_ratio: '2x' } }],
    ['utm', { utm: 'google' }],
    [['utm', 'source'], { utm: { source: 5 } }],
    [['ad_click_ids', 'gclid'], { ad_click_ids: { gclid: 5 } }],
    ['ad_click_ids', { ad_click_ids: 'abc' }],
    ['duration', { duration: '10' }],
    ['duration', { duration: -1 }],
    ['event_name', { event_name: 5 }],
    ['properties', { properties: 'a=b' }],
    ['properties', { properties: { nested: { a: 1 } } }],
    ['properties', { properties: { list: [1, 2] } }],
    ['properties', { properties: props33 }],
    ['properties', { properties: { big: 'x'.repeat(5000) } }],
    [['vitals', 'lcp'], { vitals: { lcp: 'fast' } }],
    ['error_name', { error_name: 5 }],
    ['error_message', { error_message: 5 }],
    ['error_stack', { error_stack: 5 }],
    ['provider', { provider: 5 }],
  ]
  for (const [field, patch] of cases) {
    const reply = await postEvent(server, { ...fresh(), ...patch })
    namesField(t, reply, field, 400, JSON.stringify(patch).slice(0, 60))
    hasCors(t, reply)
  }
})

t.test('32 properties within 4 KiB, of every allowed value type, are accepted', async (t) => {
  const properties: Record<string, unknown> = Object.fromEntries(Array.from({ length: 28 }, (_, i) => [`k${i}`, i]))
  Object.assign(properties, { s: 'text', b: true, n: null, f: 1.5 })
  const reply = await postEvent(server, { ...fresh(), properties })
  t.equal(reply.status, 202, reply.text)
})

t.test('a type that is not one of the eleven is refused, naming type', async (t) => {
  for (const type of ['click', 'PageView', 'pageviews', 'custom']) {
    namesField(t, await postEvent(server, { ...fresh(), type }), 'type', 400, type)
  }
})

t.test('identifying strings: accepted at their limit, refused one character over it', async (t) => {
  const ev = (patch: EventBody) => ({ ...fresh(), ...patch })
  const cases: [string | string[], (s: string) => EventBody, number, string][] = [
    ['session_id', (s) => ev({ session_id: s }), 128, 'a'],
    ['visitor_id', (s) => ev({ visitor_id: s }), 128, 'v'],
    ['user_id', (s) => ev({ user_id: s }), 256, 'é'],
    ['path', (s) => ev({ path: '/' + s.slice(1) }), 2048, 'p'],
    ['event_name', (s) => customEvent(site, uid('s'), s), 256, 'e'],
    ['hostname', (s) => ev({ hostname: s }), 256, 'h'],
    ['language', (s) => ev({ language: s }), 256, 'l'],
    ['error_name', (s) => ev({ type: 'error', error_name: s }), 256, 'n'],
    ['provider', (s) => ev({ type: 'payment', provider: s }), 256, 'p'],
    [['utm', 'source'], (s) => ev({ utm: { source: s } }), 256, 'u'],
    [['utm', 'campaign'], (s) => ev({ utm: { campaign: s } }), 256, 'c'],
    [['ad_click_ids', 'gclid'], (s) => ev({ ad_click_ids: { gclid: s } }), 256, 'g'],
  ]
  for (const [field, build, limit, ch] of cases) {
    const atLimit = await postEvent(server, build(ch.repeat(limit)))
    t.equal(atLimit.status, 202, `${field} of ${limit} characters: ${atLimit.text.slice(0, 200)}`)
    namesField(t, await postEvent(server, build(ch.repeat(limit + 1))), field, 400, `${field} of ${limit + 1} characters`)
  }
})

t.test('lengths are counted as JavaScript counts them (UTF-16 code units)', async (t) => {
  // '😀' is two code units: 128 of them are exactly the 256 allowed for user_id.
  const ok = await postEvent(server, { ...fresh(), user_id: '😀'.repeat(128) })
  t.equal(ok.status, 202, ok.text)
  namesField(t, await postEvent(server, { ...fresh(), user_id: '😀'.repeat(128) + 'x' }), 'user_id')
})

t.test('ids must match ^[A-Za-z0-9._:-]+$', async (t) => {
  t.equal((await postEvent(server, { ...fresh(), session_id: 'Az09._:-' })).status, 202, 'every allowed character')
  t.equal((await postEvent(server, { ...fresh(), visitor_id: 'v.1:2-3_x' })).status, 202)
  for (const bad of ['has space', 'slash/no', 'ümlaut', 'semi;colon', 'a\nb']) {
    namesField(t, await postEvent(server, { ...fresh(), session_id: bad }), 'session_id', 400, JSON.stringify(bad))
    namesField(t, await postEvent(server, { ...fresh(), visitor_id: bad }), 'visitor_id', 400, JSON.stringify(bad))
  }
})

t.test('descriptive text over its limit is cut, never rejected', async (t) => {
  const long = 'x'.repeat(5000)
  const cases: EventBody[] = [
    { url: `https://example.com/${long}` },
    { referrer: `https://ref.example/${long}` },
    { title: long },
    { user_agent: UA.chromeLinux + long },
    { type: 'error', error_message: long },
    { type: 'error', error_stack: '€'.repeat(3000) },
    { type: 'error', error_stack: long, error_message: long, error_name: 'TypeError' },
  ]
  for (const patch of cases) {
    const reply = await postEvent(server, { ...fresh(), ...patch })
    t.equal(reply.status, 202, `${Object.keys(patch).join(', ')}: ${reply.text.slice(0, 200)}`)
  }
})

t.test('a referrer over 2048 characters is stored cut to its first 2048', async (t) => {
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: uid('cut') })
  const referrer = 'https://ref.example/' + 'r'.repeat(3000)
  const session = uid('s')
  t.equal((await postEvent(server, customEvent(site, session, goal.match_event as string, { referrer }))).status, 202)
  await settledGoals(server, site, 2, (a) => goalIn(a, goal.id)?.conversions === 1)
  const page = await sessionsPage(server, goal.id, { days: 2 })
  const row = page.sessions.find((s) => s.session_id === session)
  t.ok(row, 'the session is listed')
  t.equal(row?.referrer?.length, 2048, 'cut to 2048 characters')
  t.equal(row?.referrer, referrer.slice(0, 2048), 'the first 2048 characters are kept')
})

t.test('timestamps: ISO 8601 with Z or an offset, at most 5 minutes ahead, within the retention', async (t) => {
  const offsetIso = (ms: number, hours: number) => {
    const shifted = new Date(Math.floor(ms / 1000) * 1000 + hours * 3_600_000).toISOString().slice(0, 19)
    return `${shifted}+${String(hours).padStart(2, '0')}:00`
  }
  const accepted = [minutesAgo(1), minutesAgo(-2), offsetIso(Date.now() - 60_000, 2), daysAgo(89), daysAgo(1, 0, 30)]
  for (const timestamp of accepted) {
    const reply = await postEvent(server, { ...fresh(), timestamp })
    t.equal(reply.status, 202, `${timestamp}: ${reply.text}`)
  }
  const today = new Date().toISOString().slice(0, 10)
  const refused = ['yesterday', 'not a date', '2024-13-45T25:61:00Z', today, `${today}T10:00:00`, minutesAgo(-10), minutesAgo(-60 * 24), daysAgo(92), daysAgo(400)]
  for (const timestamp of refused) {
    const reply = await postEvent(server, { ...fresh(), timestamp })
    namesField(t, reply, 'timestamp', 400, timestamp)
    hasCors(t, reply)
  }
})

t.test('an event without a timestamp is dated when the server receives it', async (t) => {
  const goal = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: uid('now') })
  const session = uid('s')
  const before = Date.now()
  const reply = await postEvent(server, { type: 'custom_event', site_id: site, session_id: session, event_name: goal.match_event })
  const after = Date.now()
  t.equal(reply.status, 202, reply.text)
  await settledGoals(server, site, 1, (a) => goalIn(a, goal.id)?.conversions === 1)
  const row = (await sessionsPage(server, goal.id, { days: 1 })).sessions.find((s) => s.session_id === session)
  const at = Date.parse(row?.timestamp ?? '')
  t.ok(at >= before - 1000 && at <= after + 1000, `timestamp ${row?.timestamp} is the time of receipt`)
})

t.test('an unknown site_id is refused, naming site_id', async (t) => {
  for (const id of [uid('never-created'), 'x'.repeat(129)]) {
    const reply = await postEvent(server, pageview(id, uid('s'), '/'))
    namesField(t, reply, 'site_id', 400, id.slice(0, 30))
    hasCors(t, reply)
  }
})

t.test('custom_event requires event_name', async (t) => {
  const base = { type: 'custom_event', site_id: site, session_id: uid('s') }
  namesField(t, await postEvent(server, base), 'event_name', 400, 'absent')
  namesField(t, await postEvent(server, { ...base, event_name: null }), 'event_name', 400, 'null')
  t.equal((await postEvent(server, { ...base, event_name: 'signup' })).status, 202, 'present')
})

t.test('an optional field set to null counts as absent', async (t) => {
  const nulls = {
    visitor_id: null, user_id: null, timestamp: null, url: null, path: null, hostname: null, title: null,
    referrer: null, language: null, user_agent: null, screen: null, utm: null, ad_click_ids: null,
    duration: null, event_name: null, properties: null, vitals: null, error_name: null, error_message: null,
    error_stack: null, provider: null,
  }
  const reply = await postEvent(server, { type: 'pageview', site_id: site, session_id: uid('s'), ...nulls })
  t.equal(reply.status, 202, reply.text)
})

t.test('unknown fields, top-level or nested, are dropped, not refused', async (t) => {
  const reply = await postEvent(server, {
    ...fresh(),
    foo: 'bar',
    nested_unknown: { a: [1, { b: 2 }] },
    screen: { width: 1280, height: 800, depth: 24, orientation: { angle: 0 } },
    utm: { source: 'news', medium: 'email', extra: 5 },
    vitals: { lcp: 1200, unknown_metric: 'x' },
  })
  t.equal(reply.status, 202, reply.text)
})

t.test('Content-Type text/plain carries JSON just the same', async (t) => {
  for (const type of ['text/plain', 'text/plain;charset=UTF-8']) {
    const reply = await postEvent(server, JSON.stringify(fresh('/beacon')), { 'content-type': type })
    t.equal(reply.status, 202, `${type}: ${reply.text}`)
    hasCors(t, reply)
  }
  namesField(t, await postEvent(server, JSON.stringify({ ...fresh(), session_id: 5 }), { 'content-type': 'text/plain' }), 'session_id')
})

t.test('the body decides, not the Content-Type: a JSON body under another type is accepted', async (t) => {
  for (const type of ['application/x-www-form-urlencoded', 'application/octet-stream']) {
    const reply = await postEvent(server, JSON.stringify(fresh('/typed')), { 'content-type': type })
    t.equal(reply.status, 202, `${type}: ${reply.text}`)
  }
  const form = await postEvent(server, 'type=pageview&site_id=x', { 'content-type': 'application/x-www-form-urlencoded' })
  t.equal(form.status, 400, 'a form body is not JSON')
})

t.test('a body over 64 KiB is refused with 413; exactly 64 KiB is not', async (t) => {
  const sized = (bytes: number) => {
    const base = { ...fresh(), title: '' }
    const pad = bytes - Buffer.byteLength(JSON.stringify(base))
    return JSON.stringify({ ...base, title: 't'.repeat(pad) })
  }
  const exact = sized(64 * 1024)
  t.equal(Buffer.byteLength(exact), 65536)
  const ok = await postEvent(server, exact)
  t.equal(ok.status, 202, `64 KiB: ${ok.text.slice(0, 200)}`)
  const over = await postEvent(server, sized(64 * 1024 + 1))
  isError(t, over, 413, undefined, '64 KiB + 1')
  hasCors(t, over)
  isError(t, await postEvent(server, sized(300 * 1024)), 413, undefined, '300 KiB')
})

t.test('OPTIONS preflight answers 204 with the CORS headers', async (t) => {
  const reply = await server.request('OPTIONS', '/api/event', {
    headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  })
  t.equal(reply.status, 204)
  t.equal(reply.text, '', 'no body')
  t.equal(reply.headers.get('access-control-allow-origin'), '*')
  t.equal(reply.headers.get('access-control-allow-methods'), 'POST, OPTIONS')
  t.equal(reply.headers.get('access-control-allow-headers'), 'Content-Type')
})

t.test('Origin: the site domain and its subdomains are allowed, other hosts refused', async (t) => {
  const guarded = (await createSite(server, { domain: 'example.com' })).site_id
  const open = (await createSite(server)).site_id
  const send = (siteId: string, origin?: string) =>
    postEvent(server, pageview(siteId, uid('s'), '/'), origin ? { origin } : {})
  t.equal((await send(guarded)).status, 202, 'no Origin (backend caller)')
  for (const origin of ['https://example.com', 'http://example.com', 'https://shop.example.com', 'https://a.b.example.com']) {
    const reply = await send(guarded, origin)
    t.equal(reply.status, 202, `${origin}: ${reply.text}`)
  }
  for (const origin of ['https://evil.com', 'https://notexample.com', 'https://example.com.evil.com', 'https://example.org']) {
    const reply = await send(guarded, origin)
    isError(t, reply, 400, /origin/i, origin)
    hasCors(t, reply)
  }
  t.equal((await send(open, 'https://evil.com')).status, 202, 'a site without a domain accepts any Origin')
})

t.test('bot user agents are acknowledged but not counted; refused events are not counted', async (t) => {
  const counted = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: counted, goal_type: 'pageview', match_path: '/bot-check' })
  const bot = await postEvent(server, pageview(counted, uid('bot'), '/bot-check', { user_agent: UA.googlebot }))
  t.equal(bot.status, 202, 'a bot gets 202')
  t.same(bot.json, { status: 'ok' })
  const refused = await postEvent(server, pageview(counted, uid('bad'), '/bot-check', { visitor_id: 'bad id' }))
  t.equal(refused.status, 400)
  const human1 = await postEvent(server, JSON.stringify(pageview(counted, uid('h'), '/bot-check')), { 'content-type': 'text/plain' })
  const human2 = await postEvent(server, pageview(counted, uid('h'), '/elsewhere'))
  t.equal(human1.status, 202)
  t.equal(human2.status, 202)
  const answer = await settledGoals(server, counted, 2, (a) => a.total_sessions >= 2)
  t.equal(answer.total_sessions, 2, 'two human sessions')
  t.equal(goalIn(answer, goal.id)?.conversions, 1, 'the bot did not convert')
})

t.test('unknown routes answer 404 and wrong methods 405, each with an error', async (t) => {
  for (const path of ['/api/nope', '/nope', '/api/events/extra', '/api/goalz']) {
    isError(t, await server.request('GET', path), 404, undefined, `GET ${path}`)
  }
  isError(t, await server.request('POST', '/api/nope', { body: {} }), 404, undefined, 'POST /api/nope')
  for (const [method, path] of [['GET', '/api/event'], ['PUT', '/api/event'], ['DELETE', '/api/event'], ['GET', '/api/events'], ['PUT', '/api/goals'], ['DELETE', '/api/login']]) {
    isError(t, await server.request(method, path, { token: server.adminToken }), 405, undefined, `${method} ${path}`)
  }
})
