// docs/api.md §7 — the browser client in real Chromium: a fixture shop on its own origin embeds
// /script.js through a recording proxy (a service behind a path prefix); every event the page sends
// is compared exactly, and the conversions it produces are read back through GET /api/goals.
import t from 'tap'
import type { Page } from 'playwright-core'
import {
  UA, VISITOR_AGENT, allSessions, createGoal, createSite, goalIn, launchBrowser, newPage, screenshot,
  serveFixtureSite, settledGoals, startRecorder, startServer, type Asserts, type Recorded,
} from './helpers/index.js'
import { CRASH_AT, FAIL_AT, shopFiles } from './fixtures/client-shop.js'

const server = await startServer({ t })
const site = (await createSite(server)).site_id
const goals = {
  signup: await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' }),
  early: await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'early_bird' }),
  app: await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/shop/app/**' }),
  about: await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/shop/about.html' }),
}
const recorder = await startRecorder(server.url, t)
const shop = await serveFixtureSite((s) => shopFiles({ service: recorder.url, siteId: site, port: s.port }), t)
const browser = await launchBrowser(t)
const AGENT = VISITOR_AGENT
const SCREEN = { width: 1280, height: 720, viewport_width: 1280, viewport_height: 720, pixel_ratio: 1 }
const NEWS = 'http://news.example/article?id=9&email=x%40y.z'
/** marks when web-vitals' part has run, so that leaving the page afterwards must report vitals */
const WATCH_VITALS = `document.addEventListener('load', (e) => { if (String(e.target.src).endsWith('/vitals.js')) window.vitalsLoaded = true }, true)`
const VITALS = ['cls', 'fcp', 'inp', 'lcp', 'ttfb']

type Body = Record<string, any>

/** the fields every event of one page view carries */
interface View {
  sid: string
  vid?: string
  uid?: string
  url: string
  path: string
  title: string
  hostname?: string
  referrer?: string
  utm?: Body
  ad_click_ids?: Body
  userAgent?: string
}

const dropUndefined = (o: Body): Body => JSON.parse(JSON.stringify(o))

function expected(type: string, v: View, extra: Body = {}): Body {
  return dropUndefined({
    type, site_id: site, session_id: v.sid, visitor_id: v.vid, user_id: v.uid, url: v.url, path: v.path,
    hostname: v.hostname ?? '127.0.0.1', title: v.title, referrer: v.referrer, language: 'en-US',
    user_agent: v.userAgent ?? AGENT, screen: SCREEN, utm: v.utm, ad_click_ids: v.ad_click_ids, ...extra,
  })
}

/**
 * Checks the values that differ from run to run and puts a fixed word in their place, so the rest
 * of the event can be compared exactly: durations, stacks and measured vitals. Without `t` it only
 * puts the words in (for the expected events).
 */
function settle(t: Asserts | null, e: Body, [least, most] = [0, 0]): Body {
  const out = { ...e }
  if (!t) {
    for (const [key, word] of [['duration', 'ms'], ['error_stack', 'stack'], ['vitals', 'measured']]) if (key in e) out[key] = word
    return out
  }
  if ('duration' in e) {
    t.ok(typeof e.duration === 'number' && e.duration >= least && e.duration <= most, `duration ${e.duration} within ${least}..${most}`)
    out.duration = 'ms'
  }
  if ('error_stack' in e) {
    t.ok(typeof e.error_stack === 'string' && Buffer.byteLength(e.error_stack) <= 2048, 'error_stack is text of at most 2048 bytes')
    out.error_stack = 'stack'
  }
  if ('vitals' in e) {
    const keys = Object.keys(e.vitals)
    t.ok(keys.every((k) => VITALS.includes(k)), `vitals named ${keys}`)
    t.ok(keys.includes('ttfb') && keys.includes('fcp'), 'ttfb and fcp measured')
    t.ok(Object.values(e.vitals).every((n) => typeof n === 'number' && n >= 0), 'vitals are numbers')
    out.vitals = 'measured'
  }
  return out
}

const canonical = (o: unknown): string =>
  JSON.stringify(o, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v))

/** compares as sets: beacons sent together may arrive in any order */
function sameEvents(t: Asserts, actual: Body[], wanted: Body[], what: string): void {
  const order = (list: Body[]) => [...list].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1))
  t.strictSame(order(actual), order(wanted), what)
}

let cursor = 0
/** when the action whose events are awaited began */
let actionAt = 0
/** the current view began after this (its action started) and before its pageview arrived */
let viewFrom = 0
let viewArrived = 0

/** runs what a visitor does, noting when, so a pageleave's duration can be bounded */
async function act<T>(action: () => Promise<T>): Promise<T> {
  actionAt = Date.now()
  return action()
}
/** the next `n` posts the recorder saw, after waiting for them */
async function next(n: number, what: string): Promise<Recorded[]> {
  await recorder.waitFor((posts) => posts.length >= cursor + n, `${n} events: ${what}`)
  const got = recorder.posts.slice(cursor, cursor + n)
  cursor += n
  return got
}

/** the next post, left for next() or expectEvents() to take */
async function peek(what: string): Promise<Recorded> {
  await recorder.waitFor((posts) => posts.length > cursor, what)
  return recorder.posts[cursor]
}

/** the next `wanted.length` events compared exactly with `wanted` */
async function expectEvents(t: Asserts, wanted: Body[], what: string): Promise<Body[]> {
  const posts = await next(wanted.length, what)
  const got = posts.map((p) => p.body as Body)
  // the page was left after the action began and the view began between viewFrom and its arrival
  const bounds: [number, number] = [Math.max(0, actionAt - viewArrived), Date.now() - viewFrom]
  sameEvents(t, got.map((e) => settle(t, e, bounds)), wanted.map((e) => settle(null, e)), what)
  const view = posts.find((p) => p.body.type === 'pageview')
  if (view) [viewFrom, viewArrived] = [actionAt, view.at]
  return got
}

async function selectText(page: Page, selector: string): Promise<void> {
  await page.evaluate((sel) => {
    const range = document.createRange()
    range.selectNodeContents(document.querySelector(sel)!)
    getSelection()!.removeAllRanges()
    getSelection()!.addRange(range)
  }, selector)
}

/**
 * Waits until web-vitals' part has run and taken the page's first paint and load timing: both reach
 * it through PerformanceObserver tasks, which the browser has run once it is next idle.
 */
async function vitalsMeasured(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as any).vitalsLoaded === true && document.readyState === 'complete'
    && performance.getEntriesByName('first-contentful-paint').length > 0)
  await page.evaluate(() => new Promise((resolve) => requestIdleCallback(resolve, { timeout: 5000 })))
}

const storageOf = (page: Page) => page.evaluate(() => ({
  local: Object.fromEntries(Object.entries(localStorage)),
  session: Object.fromEntries(Object.entries(sessionStorage)),
}))

const indexUrl = `${shop.url}/shop/index.html?utm_source=news&utm_medium=email&gclid=G-1&email=a%40b.c&token=secret`
const cleanIndex = `${shop.url}/shop/index.html?utm_source=news&utm_medium=email&gclid=G-1`
const campaignFields = { utm: { source: 'news', medium: 'email' }, ad_click_ids: { gclid: 'G-1' } }
const sessions: Record<string, string> = {}

t.test('a visitor of the shop', async (t) => {
  const page = await newPage(browser, { initScript: WATCH_VITALS })
  t.equal(await page.evaluate(() => navigator.userAgent), AGENT)
  await act(() => page.goto(indexUrl, { referer: NEWS }))

  // the first pageview, then the stub's queued calls in order: the identify comes last
  const first = await peek('the first pageview')
  const sid = first.body.session_id as string
  const vid = first.body.visitor_id as string
  t.match(sid, /^[a-z0-9]{8,}$/, 'a session id')
  t.match(vid, /^[a-z0-9]{8,}$/, 'a visitor id')
  t.not(sid, vid)
  sessions.visitor = sid
  let view: View = { sid, vid, url: cleanIndex, path: '/shop/index.html', title: 'Fixture shop', referrer: 'http://news.example/article', ...campaignFields }
  await expectEvents(t, [
    expected('pageview', view),
    expected('custom_event', view, { event_name: 'early_bird', properties: { plan: 'pro', seats: 3 } }),
    expected('identify', { ...view, uid: 'user-42' }, { properties: { plan: 'pro' } }),
  ], 'load: pageview, queued track and identify')
  view = { ...view, uid: 'user-42' }

  await t.test('data-analytics-event: the nearest tagged ancestor, string properties, no button_click', async (t) => {
    await page.click('#signup-label')
    await expectEvents(t, [expected('custom_event', view, { event_name: 'signup', properties: { plan: 'pro', 'billing-cycle': 'yearly', seats: '5' } })], 'signup')
    await page.click('#inner-em')
    await expectEvents(t, [expected('custom_event', view, { event_name: 'inner_cta', properties: { level: 'inner' } })], 'the inner of two nested tags')
    await page.click('#outer-text', { position: { x: 5, y: 5 } })
    await expectEvents(t, [expected('custom_event', view, { event_name: 'outer', properties: { level: 'outer' } })], 'the outer tag')
  })

  await t.test('buttons: text (whitespace collapsed) and id', async (t) => {
    await page.click('#quote') // not a button: nothing
    await page.click('#add')
    await page.click('#go')
    await page.click('[role=button]')
    await expectEvents(t, [
      expected('button_click', view, { properties: { text: 'Add to cart', id: 'add' } }),
      expected('button_click', view, { properties: { text: 'Go', id: 'go' } }),
      expected('button_click', view, { properties: { text: 'Role button', id: null } }),
    ], 'three button clicks')
  })

  await t.test('a form submit: id, name, method, action without query — never a field value', async (t) => {
    await page.click('#subscribe')
    await expectEvents(t, [
      expected('button_click', view, { properties: { text: 'Subscribe', id: 'subscribe' } }),
      expected('form_submit', view, { properties: { id: 'newsletter', name: 'news', method: 'post', action: `${shop.url}/subscribe` } }),
    ], 'the submit button and the submit')
  })

  await t.test('a copy: length and tag — never the text', async (t) => {
    await selectText(page, '#quote')
    await page.keyboard.press('Control+C')
    await expectEvents(t, [expected('copy', view, { properties: { length: 19, tag: 'p' } })], 'copy')
  })

  await t.test('errors: file, line, column; duplicates dropped; at most 20 a page', async (t) => {
    const file = `${shop.url}/shop/app.js`
    // in steps: unhandled rejections are reported in a later task than the one that rejected
    await page.evaluate(() => {
      const w = window as any
      setTimeout(w.crash)
      setTimeout(w.crash) // the same error again
    })
    const [crash] = await expectEvents(t, [
      expected('error', view, { error_name: 'TypeError', error_message: 'cart is empty', error_stack: 'stack', properties: { file, ...CRASH_AT } }),
    ], 'an uncaught error, once')
    await page.evaluate(() => {
      // unhandled on purpose: the client reports unhandled rejections
      setTimeout(() => void Promise.reject(new RangeError('quota exceeded')))
      // a rejection with a plain string, as some libraries do: the client must report it too
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      setTimeout(() => void Promise.reject('plain reason'))
    })
    const rejections = await expectEvents(t, [
      expected('error', view, { error_name: 'RangeError', error_message: 'quota exceeded', error_stack: 'stack' }),
      expected('error', view, { error_name: 'UnhandledRejection', error_message: 'plain reason' }),
    ], 'two unhandled rejections')
    await page.evaluate(() => {
      const w = window as any
      setTimeout(() => w.fail('x'.repeat(3000)))
      for (let i = 1; i < 30; i++) setTimeout(() => w.fail(`flood ${i}`))
    })
    const flood = await expectEvents(t, [
      expected('error', view, { error_name: 'Error', error_message: 'x'.repeat(2048), error_stack: 'stack', properties: { file, ...FAIL_AT } }),
      ...Array.from({ length: 16 }, (_, i) => expected('error', view, {
        error_name: 'Error', error_message: `flood ${i + 1}`, error_stack: 'stack', properties: { file, ...FAIL_AT },
      })),
    ], 'errors up to the twentieth')
    t.match(crash?.error_stack, new RegExp(`^TypeError: cart is empty\\n\\s+at crash \\(${file.replace(/[.]/g, '\\.')}:2:9\\)`))
    t.match(rejections.find((e) => e.error_name === 'RangeError')?.error_stack, /^RangeError: quota exceeded\n/)
    t.equal(Buffer.byteLength(flood.find((e) => e.error_message?.startsWith('xxx'))?.error_stack), 2048, 'a long stack is cut to 2 KB')
    // nothing past the twentieth: the next event is the marker
    await page.evaluate(() => (window as any).goalpost.track('after_errors'))
    await expectEvents(t, [expected('custom_event', view, { event_name: 'after_errors' })], 'the marker after the errors')
  })

  await t.test('payment, and the command form of track', async (t) => {
    await page.evaluate(() => {
      const g = (window as any).goalpost
      g.payment('stripe', { amount: 49.5, currency: 'EUR' })
      g('track', 'command_form', { from: 'queue syntax' })
    })
    await expectEvents(t, [
      expected('payment', view, { provider: 'stripe', properties: { amount: 49.5, currency: 'EUR' }, revenue: { amount: 49.5, currency: 'EUR' } }),
      expected('custom_event', view, { event_name: 'command_form', properties: { from: 'queue syntax' } }),
    ], 'payment and track')
  })

  await t.test('revenue and event ids from track and payment', async (t) => {
    await page.evaluate(() => {
      const g = (window as any).goalpost
      g.track('purchase', { plan: 'pro' }, { revenue: { amount: '49.90', currency: 'eur' }, event_id: 'order-7' })
      g.payment('paddle', { amount: 0.1 + 0.2, currency: 'USD' }, { event_id: 'order-8' })
    })
    await expectEvents(t, [
      expected('custom_event', view, { event_name: 'purchase', properties: { plan: 'pro' }, revenue: { amount: '49.90', currency: 'EUR' }, event_id: 'order-7' }),
      expected('payment', view, { provider: 'paddle', properties: { amount: 0.1 + 0.2, currency: 'USD' }, revenue: { amount: 0.3, currency: 'USD' }, event_id: 'order-8' }),
    ], 'revenue in the shape the server takes: currency upper-cased, float noise rounded away')
  })

  await t.test('SPA navigation: one pageview per path change, the previous URL as referrer', async (t) => {
    await act(() => page.evaluate(() => history.pushState({}, '', '/shop/app/checkout?step=2&email=x%40y.z')))
    const checkout: View = { ...view, url: `${shop.url}/shop/app/checkout`, path: '/shop/app/checkout', referrer: cleanIndex, utm: undefined, ad_click_ids: undefined }
    await expectEvents(t, [
      expected('pageleave', { ...view, utm: undefined, ad_click_ids: undefined }, { duration: 0 }),
      expected('pageview', checkout),
    ], 'pushState')
    await page.evaluate(() => history.replaceState({}, '', '/shop/app/checkout?step=3'))
    await act(() => page.evaluate(() => history.replaceState({}, '', '/shop/app/checkout/done')))
    const done: View = { ...checkout, url: `${shop.url}/shop/app/checkout/done`, path: '/shop/app/checkout/done', referrer: checkout.url }
    await expectEvents(t, [
      expected('pageleave', { ...checkout, url: checkout.url }, { duration: 0 }),
      expected('pageview', done),
    ], 'replaceState: nothing for the same path, then the new one')
    await act(() => page.goBack())
    view = { ...view, referrer: done.url }
    await expectEvents(t, [
      expected('pageleave', { ...done, ...campaignFields }, { duration: 0 }),
      expected('pageview', view),
    ], 'popstate back to the first page')
  })

  await t.test('an external link, then leaving: external_link, pageleave, web_vitals', async (t) => {
    await vitalsMeasured(page)
    await screenshot(page, 'client-fixture-shop')
    await act(() => Promise.all([page.waitForURL(/elsewhere/), page.click('#partner')]))
    await expectEvents(t, [
      expected('external_link', { ...view, url: `http://localhost:${shop.port}/elsewhere.html?utm_source=shop` }),
      expected('pageleave', view, { duration: 0 }),
      expected('web_vitals', view, { vitals: {} }),
    ], 'leaving for the partner')
  })

  await t.test('user_id is kept across page loads; identify(null) forgets it', async (t) => {
    await act(() => page.goto(`${shop.url}/shop/about.html`))
    const about: View = { sid, vid, uid: 'user-42', url: `${shop.url}/shop/about.html`, path: '/shop/about.html', title: 'About us' }
    await expectEvents(t, [expected('pageview', about)], 'the next page load, same session and visitor')
    await page.evaluate(() => {
      const g = (window as any).goalpost
      g.identify(null)
      g.track('anonymous')
    })
    const anonymous = { ...about, uid: undefined }
    await expectEvents(t, [expected('custom_event', anonymous, { event_name: 'anonymous' })], 'no identify event, no user_id')
    await vitalsMeasured(page)
    await act(() => page.reload())
    await expectEvents(t, [
      expected('pageleave', anonymous, { duration: 0 }),
      expected('web_vitals', anonymous, { vitals: {} }),
      expected('pageview', anonymous),
    ], 'reload: still forgotten')
    const stored = await storageOf(page)
    t.notOk('goalpost_uid' in stored.local, 'the user id is gone from storage')
    t.equal(stored.local.goalpost_vid, vid, 'the visitor id is in localStorage')
    t.match(stored.local.goalpost_sid, new RegExp(`^${sid} \\d+$`), 'the session id and its last activity')
  })
})

t.test('data-visitor="none": no visitor id, nothing in localStorage, the session in sessionStorage', async (t) => {
  const page = await newPage(browser)
  await page.goto(`${shop.url}/shop/private.html`)
  const first = await peek('private pageview')
  const sid = first.body.session_id as string
  sessions.private = sid
  const view: View = { sid, url: `${shop.url}/shop/private.html`, path: '/shop/private.html', title: 'Private' }
  await expectEvents(t, [expected('pageview', view)], 'pageview without visitor_id')
  await page.click('#signup')
  await expectEvents(t, [expected('custom_event', view, { event_name: 'signup', properties: { plan: 'pro', 'billing-cycle': 'yearly', seats: '5' } })], 'signup')
  const stored = await storageOf(page)
  t.same(stored.local, {}, 'localStorage untouched')
  t.match(stored.session, { goalpost_sid: new RegExp(`^${sid} \\d+$`) })
  await screenshot(page, 'client-visitor-none')
})

t.test('data-keep-query keeps query and fragment; data-api names the service', async (t) => {
  const page = await newPage(browser)
  await page.goto(`${shop.url}/shop/keep.html?email=a%40b.c&token=t#frag`, { referer: NEWS })
  const post = await peek('keep-query pageview')
  t.equal(post.prefix, 'custom', 'sent to data-api, not to where the script came from')
  sessions.keep = post.body.session_id
  await expectEvents(t, [expected('pageview', {
    sid: post.body.session_id, vid: post.body.visitor_id, url: `${shop.url}/shop/keep.html?email=a%40b.c&token=t#frag`,
    path: '/shop/keep.html', title: 'Keep query', referrer: NEWS,
  })], 'the whole URL and referrer; data-respect-dnt sends when neither DNT nor GPC is on')
})

for (const [name, init] of [
  ['Do Not Track', `Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' })`],
  ['Global Privacy Control', `Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true })`],
] as const) {
  t.test(`data-respect-dnt with ${name} on: nothing is sent`, async (t) => {
    const page = await newPage(browser, { initScript: init })
    await page.goto(`${shop.url}/shop/dnt.html`)
    await page.waitForFunction(() => typeof (window as any).goalpost?.track === 'function')
    await page.click('#signup')
    await page.evaluate(() => (window as any).goalpost.track('direct_under_dnt'))
    t.same((await storageOf(page)).local, {}, 'no id stored')
    await screenshot(page, `client-dnt-${name.replace(/ /g, '-').toLowerCase()}`)
    // a page of the same browser without data-respect-dnt: its pageview is the very next event
    await page.goto(`${shop.url}/shop/sentinel.html`)
    const post = await peek('the sentinel pageview')
    sessions[name] = post.body.session_id
    await expectEvents(t, [expected('pageview', {
      sid: post.body.session_id, vid: post.body.visitor_id, url: `${shop.url}/shop/sentinel.html`, path: '/shop/sentinel.html', title: 'Sentinel',
    })], 'only the sentinel')
    t.notOk(recorder.posts.some((p) => p.body?.path === '/shop/dnt.html'), 'nothing from the page that respects DNT')
  })
}

t.test('a crawler: its beacons are acknowledged, not counted', async (t) => {
  const page = await newPage(browser, { userAgent: UA.googlebot })
  await page.goto(`${shop.url}/shop/private.html`)
  await page.click('#signup')
  const posts = await next(2, 'the crawler pageview and signup')
  t.same(posts.map((p) => [p.body.type, p.status]), [['pageview', 202], ['custom_event', 202]])
  t.same(posts.map((p) => p.body.user_agent), [UA.googlebot, UA.googlebot])
})

t.test('every beacon: text/plain, the page origin, the browser agent, 202', async (t) => {
  t.equal(cursor, recorder.posts.length, 'no event beyond those expected')
  for (const p of recorder.posts) {
    t.equal(p.status, 202, p.text.slice(0, 80))
    t.equal(p.contentType, 'text/plain')
    t.equal(p.origin, shop.url)
    t.equal(p.userAgent, p.body.user_agent, 'the header and the body agree')
    t.notOk('timestamp' in p.body, 'no timestamp')
  }
  const all = recorder.posts.map((p) => p.text).join('\n')
  t.notMatch(all, /secret@example\.com|token=secret|Copy this/, 'no field value, private query or copied text left the page')
})

t.test('the conversions they produce', async (t) => {
  const answer = await settledGoals(server, site, 1, (a) => goalIn(a, goals.signup.id)?.conversions === 2 && a.total_sessions === 5)
  t.equal(answer.total_sessions, 5, 'visitor, visitor-none, keep-query and two sentinel sessions; the crawler is not counted')
  t.equal(goalIn(answer, goals.signup.id)?.conversions, 2, 'signup: the visitor and the visitor-none session')
  t.equal(goalIn(answer, goals.early.id)?.conversions, 1, 'early_bird: queued before the script loaded')
  t.equal(goalIn(answer, goals.app.id)?.conversions, 1, 'the SPA route')
  t.equal(goalIn(answer, goals.about.id)?.conversions, 1)
  const rows = await allSessions(server, goals.signup.id, 1)
  t.same(rows.map((r) => r.session_id).sort(), [sessions.visitor, sessions.private].sort())
  const visitor = rows.find((r) => r.session_id === sessions.visitor)
  t.match(visitor, { entry_page: '/shop/index.html', exit_page: '/shop/about.html', referrer: 'http://news.example/article', device: 'desktop', browser: 'Chrome', os: 'Linux' })
  t.match(rows.find((r) => r.session_id === sessions.private), { visitor_id: null, entry_page: '/shop/private.html' })
})
