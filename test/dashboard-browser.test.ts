// The dashboard (GET /) in real Chromium: every control found by its accessible name, as a screen
// reader or a black-box check would find it.
import t from 'tap'
import type { Locator, Page } from 'playwright-core'
import {
  createSite, createUser, customEvent, pageview, pollUntil, postEvent, postEvents, startServer, uid, type Server,
} from './helpers/index.js'
import { browserMissing, launchBrowser, openPage, screenshot } from './helpers/browser.js'

const missing = browserMissing()
if (missing) {
  t.fail(missing)
  process.exit(1)
}

const server = await startServer({ t })
const browser = await launchBrowser(t)
const UI_TIMEOUT_MS = 10_000
const PHONE = { width: 390, height: 844 }

/** The row of the goals table whose Name cell is exactly `name`. */
const goalRow = (page: Page, name: string): Locator =>
  page.getByRole('table').getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) })

/** Waits until `read` gives a value `until` accepts, and returns the last value read either way. */
const eventually = <T>(read: () => Promise<T>, until: (v: T) => boolean, ms = UI_TIMEOUT_MS) => pollUntil(read, until, ms, 100)

/** The text of the Conversions cell (4th column) of a goal's row. */
const conversionsOf = async (page: Page, name: string) => (await goalRow(page, name).getByRole('cell').nth(3).textContent())?.trim()

async function logIn(page: Page, s: Server, email: string, password: string): Promise<void> {
  await page.goto(s.url + '/')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByRole('button', { name: 'Log out' }).waitFor({ timeout: UI_TIMEOUT_MS })
}

t.test('a user logs in, creates goals, watches a conversion arrive live, expands, renames and deletes', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  // 27 sessions saw /pricing (more than one page of sessions); others saw the blog; some signed up
  const pricing = Array.from({ length: 27 }, (_, i) => pageview(site, `s-pricing-${i}`, '/pricing/', { referrer: 'https://search.example/' }))
  const blog = Array.from({ length: 3 }, (_, i) => pageview(site, `s-blog-${i}`, '/blog/hello'))
  const signups = Array.from({ length: 2 }, (_, i) => customEvent(site, `s-blog-${i}`, 'signup_completed'))
  await postEvents(server, [...pricing, ...blog, ...signups])
  await server.settle()

  const { page, pageErrors } = await openPage(browser, { viewport: { width: 1280, height: 900 } })
  const frames: string[] = []
  page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push(String(f.payload))))

  await page.goto(server.url + '/')
  await page.getByRole('button', { name: 'Log in' }).waitFor()
  await screenshot(page, 'dashboard-login')
  await logIn(page, server, user.email, user.password)

  // the picker fills once the user's sites have loaded, after the login itself
  const picked = await eventually(() => page.getByRole('combobox', { name: 'Site' }).inputValue(), (v) => v === site)
  t.equal(picked, site, 'the Site picker shows the user\'s site')
  const windowPicker = page.getByRole('combobox', { name: 'Window' })
  t.same(await windowPicker.getByRole('option').allTextContents(), ['Today', '7 days', '30 days', '90 days'], 'Window options')
  t.same(
    (await page.getByRole('table').getByRole('columnheader').allTextContents()).map((s) => s.trim()),
    ['Name', 'Type', 'Matches', 'Conversions', 'Conversion rate', 'Revenue'],
    'the goals table has exactly these column headers',
  )

  // a page goal with a blank name: the placeholder announces the generated name, the table shows it
  await page.getByRole('combobox', { name: 'Goal type' }).selectOption({ label: 'Page' })
  await page.getByLabel('Path pattern').fill('/pricing/')
  t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('placeholder'), 'Visit /pricing', 'placeholder = the name the server generates (normalized)')
  await page.getByRole('button', { name: 'Create goal' }).click()
  await goalRow(page, 'Visit /pricing').waitFor({ timeout: UI_TIMEOUT_MS })
  t.equal(await conversionsOf(page, 'Visit /pricing'), '27', 'retroactive: the 27 sessions already seen are counted')
  t.equal((await goalRow(page, 'Visit /pricing').getByRole('cell').nth(1).textContent())?.trim(), 'Page', 'Type column')
  t.equal((await goalRow(page, 'Visit /pricing').getByRole('cell').nth(2).textContent())?.trim(), '/pricing', 'Matches column')

  // the API's error, inline: a pattern with *** is refused with the server's own sentence
  await page.getByLabel('Path pattern').fill('/a/***')
  await page.getByRole('button', { name: 'Create goal' }).click()
  const alert = page.getByRole('alert').filter({ hasText: /match_path|\*\*\*/ })
  await alert.waitFor({ timeout: UI_TIMEOUT_MS })
  t.match(await alert.textContent(), /\*\*\*|match_path/, 'the API error is shown inline')

  // an event goal picked from the suggestions the site has already seen
  await page.getByRole('combobox', { name: 'Goal type' }).selectOption({ label: 'Event' })
  const eventName = page.getByLabel('Event name')
  await eventName.fill('sign')
  const suggestion = page.getByRole('option', { name: 'signup_completed', exact: true, includeHidden: true })
  await suggestion.waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS })
  t.notOk(await page.getByRole('option', { name: '/blog/hello', includeHidden: true }).count(), 'event suggestions hold no paths')
  t.equal(await page.locator('datalist option[value="signup_completed"]').count(), 1, 'offered as a datalist option')
  // headless Chromium draws no native suggestion popup; choosing an entry there sets the field to
  // the option's value, which is what happens here
  await eventName.fill(await suggestion.evaluate((o) => (o as HTMLOptionElement).value))
  t.equal(await eventName.inputValue(), 'signup_completed', 'the suggestion fills the field')
  t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('placeholder'), 'Signup completed', 'generated event goal name shown before creating')
  await page.getByRole('button', { name: 'Create goal' }).click()
  await goalRow(page, 'Signup completed').waitFor({ timeout: UI_TIMEOUT_MS })
  t.equal(await conversionsOf(page, 'Signup completed'), '2')
  await screenshot(page, 'dashboard-goals')

  // live: a new conversion arrives over the WebSocket, without a reload
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42))
  const framesBefore = frames.length
  const reply = await postEvent(server, pageview(site, uid('live'), '/pricing', { timestamp: undefined }))
  t.equal(reply.status, 202, reply.text)
  const live = await eventually(() => conversionsOf(page, 'Visit /pricing'), (v) => v === '28')
  t.equal(live, '28', 'the conversion appears in the table by itself')
  t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, 'the page was not reloaded')
  t.ok(frames.length > framesBefore, 'the update came over the WebSocket')

  // the converted sessions, a page of 25 and then "More"
  await goalRow(page, 'Visit /pricing').getByRole('button', { name: 'Sessions' }).click()
  const panel = page.getByRole('region', { name: /Converted sessions/ })
  await panel.getByRole('listitem').first().waitFor({ timeout: UI_TIMEOUT_MS })
  t.equal(await panel.getByRole('listitem').count(), 25, 'first page: 25 sessions')
  const first = panel.getByRole('listitem').first()
  for (const label of ['Entry page', 'Exit page', 'Referrer', 'Device', 'Browser', 'Duration', 'Time']) {
    t.equal(await first.getByRole('term').filter({ hasText: new RegExp(`^${label}$`) }).count(), 1, `each session shows ${label}`)
  }
  t.match(await panel.textContent(), /https:\/\/search\.example\//, 'the referrer is shown')
  t.match(await panel.textContent(), /desktop/, 'the device is shown')
  await screenshot(page, 'dashboard-sessions')
  await panel.getByRole('button', { name: 'More' }).click()
  const all = await eventually(() => panel.getByRole('listitem').count(), (n) => n === 28)
  t.equal(all, 28, '"More" appends the rest')
  t.equal(await panel.getByRole('button', { name: 'More' }).count(), 0, 'no "More" after the last page')
  await panel.getByRole('button', { name: 'Close' }).click()

  // rename through the prompt
  page.once('dialog', (d) => void d.accept('Pricing visits'))
  await goalRow(page, 'Visit /pricing').getByRole('button', { name: 'Rename' }).click()
  await goalRow(page, 'Pricing visits').waitFor({ timeout: UI_TIMEOUT_MS })
  t.pass('renamed')

  // delete asks first: dismissing keeps the goal, accepting removes it
  let question = ''
  page.once('dialog', (d) => {
    question = d.message()
    void d.dismiss()
  })
  await goalRow(page, 'Signup completed').getByRole('button', { name: 'Delete' }).click()
  t.match(question, /Signup completed/, 'the confirmation names the goal')
  t.equal(await goalRow(page, 'Signup completed').count(), 1, 'dismissed: still there')
  page.once('dialog', (d) => void d.accept())
  await goalRow(page, 'Signup completed').getByRole('button', { name: 'Delete' }).click()
  await goalRow(page, 'Signup completed').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS })
  const goals = (await server.admin('GET', `/api/goals?site_id=${site}`)).json?.goals ?? []
  t.same(goals.map((g: { name: string }) => g.name), ['Pricing visits'], 'the server agrees: one goal, renamed')

  await page.getByRole('button', { name: 'Log out' }).click()
  await page.getByRole('button', { name: 'Log in' }).waitFor({ timeout: UI_TIMEOUT_MS })
  t.equal((await page.context().cookies()).filter((c) => c.name === 'goalpost_session').length, 0, 'the cookie is gone after logging out')
  t.same(pageErrors, [], 'no uncaught errors in the page')
})

t.test('the admin token is exchanged once for the HttpOnly cookie; sites, users and snippets', async (t) => {
  const { page, context, pageErrors } = await openPage(browser, { viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
  await page.goto(server.url + '/')
  await page.getByLabel('Admin token').fill(server.adminToken!)
  await page.getByRole('button', { name: 'Use admin token' }).click()
  await page.getByRole('button', { name: 'Log out' }).waitFor({ timeout: UI_TIMEOUT_MS })

  const cookie = (await context.cookies()).find((c) => c.name === 'goalpost_session')
  t.ok(cookie?.httpOnly, 'the session cookie is HttpOnly')
  t.not(cookie?.value, server.adminToken, 'the cookie is not the token itself')
  const stored = await page.evaluate(() => JSON.stringify({ cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } }))
  t.notMatch(stored, server.adminToken!, 'the token is in no cookie or storage a script can read')
  t.equal(await page.getByLabel('Admin token').count(), 0, 'the token field is gone')

  const site = uid('shop')
  await page.getByLabel('Identifier').fill(site)
  await page.getByRole('button', { name: 'Add site' }).click()
  const expected = `<script defer src="${server.url}/script.js" data-site-id="${site}"></script>`
  const snippet = page.getByText(expected, { exact: true })
  await snippet.waitFor({ timeout: UI_TIMEOUT_MS })
  t.pass('the new site shows its snippet')
  const copyButton = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: site, exact: true }) }).getByRole('button', { name: 'Copy' })
  await copyButton.click()
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), expected, 'Copy puts the snippet on the clipboard')

  const email = `${uid('owner')}@example.com`
  await page.getByLabel('E-mail address').fill(email)
  await page.getByLabel('Initial password').fill('a long password')
  await page.getByLabel('Access').selectOption(site)
  await page.getByRole('button', { name: 'Add user' }).click()
  await page.getByText(email).waitFor({ timeout: UI_TIMEOUT_MS })
  await screenshot(page, 'dashboard-admin')
  t.same(pageErrors, [], 'no uncaught errors in the admin page')

  // the user the admin made can log in and sees exactly that site
  const other = await openPage(browser)
  await logIn(other.page, server, email, 'a long password')
  t.same(await other.page.getByRole('combobox', { name: 'Site' }).getByRole('option').allTextContents(), [site])
  await other.context.close()
  await context.close()
})

t.test('keyboard only, at phone width', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const { page, context } = await openPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true })
  await page.goto(server.url + '/')
  await page.getByLabel('Email').focus()
  await page.keyboard.type(user.email)
  await page.keyboard.press('Tab')
  await page.keyboard.type(user.password)
  await page.keyboard.press('Enter')
  await page.getByRole('button', { name: 'Log out' }).waitFor({ timeout: UI_TIMEOUT_MS })
  t.pass('logged in with the keyboard alone')

  await page.getByLabel('Path pattern').focus()
  await page.keyboard.type('/checkout/**')
  await page.keyboard.press('Enter')
  await goalRow(page, 'Visit /checkout/**').waitFor({ timeout: UI_TIMEOUT_MS })
  t.pass('a goal created with the keyboard alone')
  // a phone browser zooms out to fit a page wider than the screen, so compare with the screen itself
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  t.ok(width <= PHONE.width, `the page fits the ${PHONE.width} px screen (it is ${width} px wide)`)
  await screenshot(page, 'dashboard-phone')

  t.equal((await postEvent(server, pageview(site, uid('phone'), '/checkout/done'))).status, 202)
  t.equal(await eventually(() => conversionsOf(page, 'Visit /checkout/**'), (v) => v === '1'), '1', 'the conversion arrives live')
  await goalRow(page, 'Visit /checkout/**').getByRole('button', { name: 'Sessions' }).click()
  await page.getByRole('list', { name: 'Converted sessions' }).getByRole('listitem').first().waitFor({ timeout: UI_TIMEOUT_MS })
  const expanded = await page.evaluate(() => document.documentElement.scrollWidth)
  t.ok(expanded <= PHONE.width, `with the sessions open the page still fits (${expanded} px)`)
  await screenshot(page, 'dashboard-phone-sessions')
  await context.close()
})

t.test('a goal\'s report, funnels and overlap, at desktop and phone widths', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const MIN = 60_000
  // today in UTC (the site's zone) even right after midnight: the server takes up to 5 minutes ahead
  const base = Math.max(Math.floor(Date.now() / 86_400_000) * 86_400_000, Date.now() - 30 * MIN)
  const at = (minutes: number) => new Date(base + minutes * MIN).toISOString()
  // 12 sessions see the pricing page; 6 of them add to the cart a minute later; 2 of those buy,
  // and one more buys without seeing the pricing page
  const events = Array.from({ length: 12 }, (_, i) => pageview(site, `v${i}`, '/pricing', { timestamp: at(0) }))
  for (let i = 0; i < 6; i++) events.push(customEvent(site, `v${i}`, 'cart', { timestamp: at(1) }))
  for (const s of ['v0', 'v1', 'x']) events.push(customEvent(site, s, 'buy', { timestamp: at(2) }))
  await postEvents(server, events)
  await server.settle()
  for (const body of [{ goal_type: 'pageview', match_path: '/pricing' }, { goal_type: 'custom_event', match_event: 'cart' }, { goal_type: 'custom_event', match_event: 'buy' }]) {
    const reply = await server.admin('POST', '/api/goals', { site_id: site, ...body })
    t.equal(reply.status, 201, reply.text)
  }

  for (const viewport of [{ width: 1280, height: 900 }, PHONE]) {
    const phone = viewport === PHONE
    const { page, context, pageErrors } = await openPage(browser, phone ? { viewport, isMobile: true, hasTouch: true } : { viewport })
    await logIn(page, server, user.email, user.password)
    await goalRow(page, 'Buy').waitFor({ timeout: UI_TIMEOUT_MS })
    const goalsCard = page.getByRole('region', { name: 'Goals' })
    const card = await goalsCard.boundingBox()
    const del = await goalRow(page, 'Buy').getByRole('button', { name: 'Delete' }).boundingBox()
    t.ok(card && del && del.x + del.width <= card.x + card.width, `${viewport.width} px: the Delete button lies inside its card`)

    // the goal's name opens its report: totals and a bar per hour of today (Today → hours)
    await page.getByRole('combobox', { name: 'Window' }).selectOption({ label: 'Today' })
    await goalRow(page, 'Buy').getByRole('button', { name: 'Buy' }).click()
    const report = page.getByRole('region', { name: 'Report: Buy' })
    await report.getByRole('img').waitFor({ timeout: UI_TIMEOUT_MS })
    const totals = report.getByRole('definition')
    t.same((await totals.allTextContents()).slice(0, 2), ['3', '13'], 'conversions and sessions of the window')
    const bars = report.locator('rect[data-point]')
    const points = await bars.count()
    t.ok(points >= 23 && points <= 25, `a bar per hour of today (${points})`)
    const converting = await bars.evaluateAll((rects) => rects.filter((r) => r.getAttribute('data-conversions') !== '0').map((r) => Number(r.getAttribute('data-conversions'))))
    t.same(converting.reduce((a, b) => a + b, 0) >= 3, true, 'the conversions are in the hours they happened')
    await screenshot(page, phone ? 'dashboard-phone-report' : 'dashboard-report')
    await report.getByRole('button', { name: 'Close' }).click()

    // a funnel from the site's goals, in order
    const funnels = page.getByRole('region', { name: 'Funnels' })
    if (!phone) {
      const form = funnels.getByRole('form', { name: 'New funnel' })
      await form.getByLabel('Step 1').selectOption({ label: 'Visit /pricing' })
      await form.getByLabel('Step 2').selectOption({ label: 'Cart' })
      await form.getByRole('button', { name: 'Add step' }).click()
      await form.getByLabel('Step 3').selectOption({ label: 'Buy' })
      t.equal(await form.getByLabel('Funnel name').getAttribute('placeholder'), 'Visit /pricing → Cart → Buy', 'the generated name, before creating')
      await form.getByRole('button', { name: 'Create funnel' }).click()
    }
    const funnel = funnels.getByRole('article', { name: 'Funnel Visit /pricing → Cart → Buy' })
    const steps = funnel.getByRole('list', { name: 'Steps' }).getByRole('listitem')
    await steps.nth(2).waitFor({ timeout: UI_TIMEOUT_MS })
    t.same(await steps.evaluateAll((li) => li.map((l) => l.getAttribute('data-sessions'))), ['12', '6', '2'], 'sessions reaching each step')
    t.match(await steps.nth(1).textContent(), /50% of the step before, 6 dropped/, 'rate from the step before and the drop-off')

    // two goals' overlap
    const overlap = page.getByRole('region', { name: 'Overlap' })
    await overlap.getByLabel('First goal').selectOption({ label: 'Cart' })
    await overlap.getByLabel('Second goal').selectOption({ label: 'Buy' })
    const shared = overlap.getByRole('definition')
    await eventually(() => shared.allTextContents(), (v) => v.length === 4)
    t.same(await shared.allTextContents(), ['2', '4', '1', '7'], 'both, cart only, buy only, either')
    await screenshot(page, phone ? 'dashboard-phone-funnels' : 'dashboard-funnels')
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= viewport.width, `the page fits the ${viewport.width} px screen (it is ${width} px wide)`)
    t.same(pageErrors, [], 'no errors in the page')
    await context.close()
  }
})

/** A session the breakdown test sends: where it came from, and whether it buys. */
interface Visit {
  id: string
  referrer: string | null
  utm: { source: string; medium: string; campaign: string } | null
  country: string | null
  buys: boolean
}

/** What the page shows of one dimension's rows, computed from the visits sent (docs/api.md §9.4). */
function expectedBreakdown(visits: Visit[], valueOf: (v: Visit) => string | null, label: (value: string | null) => string): string[][] {
  const byValue = new Map<string | null, { sessions: number; conversions: number }>()
  for (const v of visits) {
    const key = valueOf(v)
    const n = byValue.get(key) ?? { sessions: 0, conversions: 0 }
    n.sessions++
    if (v.buys) n.conversions++
    byValue.set(key, n)
  }
  // the values with a conversion, most first, ties by value with null last; ten of them, the rest summed
  const ranked = [...byValue].filter(([, n]) => n.conversions > 0).sort(([a, x], [b, y]) =>
    y.conversions - x.conversions || (a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0))
  const rate = (c: number, s: number) => (s === 0 || c === 0 ? '0%' : `${((c / s) * 100).toFixed(1).replace(/\.0$/, '')}%`)
  const rows = ranked.slice(0, 10).map(([value, n]) => [label(value), String(n.sessions), String(n.conversions), rate(n.conversions, n.sessions)])
  const rest = [...byValue].filter(([value]) => !ranked.slice(0, 10).some(([shown]) => shown === value))
  if (rest.length > 0) {
    const sessions = rest.reduce((a, [, n]) => a + n.sessions, 0)
    const conversions = rest.reduce((a, [, n]) => a + n.conversions, 0)
    rows.push(['Other', String(sessions), String(conversions), rate(conversions, sessions)])
  }
  return rows
}

t.test('a goal\'s breakdown by source, referrer, UTM campaign and country, live; revenue in the goals table; at desktop and phone widths', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  const MIN = 60_000
  const base = Math.max(Math.floor(Date.now() / 86_400_000) * 86_400_000, Date.now() - 30 * MIN)
  const at = (minutes: number) => new Date(base + minutes * MIN).toISOString()
  const visits: Visit[] = []
  const visit = (id: string, referrer: string | null, utm: Visit['utm'], country: string | null, buys: boolean) => visits.push({ id, referrer, utm, country, buys })
  // from a search engine in Germany, 3 of 4 buy; from a newsletter in France, 2 of 3; direct from
  // nowhere known, 1 of 3; from 11 ad campaigns in the US, every one (more campaigns than the table shows)
  for (let i = 0; i < 4; i++) visit(`g${i}`, 'https://www.google.com/search?q=shoes', null, 'DE', i < 3)
  for (let i = 0; i < 3; i++) visit(`n${i}`, 'https://mail.example/inbox', { source: 'newsletter', medium: 'email', campaign: 'spring' }, 'FR', i < 2)
  for (let i = 0; i < 3; i++) visit(`d${i}`, null, null, null, i < 1)
  for (let i = 1; i <= 11; i++) visit(`c${i}`, 'https://ads.example/click', { source: 'ads', medium: 'cpc', campaign: `c${String(i).padStart(2, '0')}` }, 'US', true)
  const AMOUNT = '10.25'
  const eventsOf = (v: Visit, minute: number) => {
    const extra = { ...(v.referrer ? { referrer: v.referrer } : {}), ...(v.utm ? { utm: v.utm } : {}), ...(v.country ? { country: v.country } : {}) }
    const path = v.utm ? `/${v.utm.campaign}` : '/landing'
    const events = [pageview(site, v.id, path, { ...extra, timestamp: at(minute) })]
    if (v.buys) events.push(customEvent(site, v.id, 'purchase', { ...(v.country ? { country: v.country } : {}), revenue: { amount: AMOUNT, currency: 'EUR' }, timestamp: at(minute + 1) }))
    return events
  }
  await postEvents(server, visits.flatMap((v) => eventsOf(v, 0)))
  await server.settle()
  for (const body of [{ goal_type: 'custom_event', match_event: 'purchase', currency: 'EUR' }, { goal_type: 'pageview', match_path: '/landing' }]) {
    const reply = await server.admin('POST', '/api/goals', { site_id: site, ...body })
    t.equal(reply.status, 201, reply.text)
  }

  const sourceOf = (v: Visit) => v.utm?.source ?? (v.referrer ? new URL(v.referrer).hostname.replace(/^www\./, '') : null)
  const referrerOf = (v: Visit) => (v.referrer ? new URL(v.referrer).hostname.replace(/^www\./, '') : null)
  const countryName: Record<string, string> = { DE: 'Germany (DE)', FR: 'France (FR)', US: 'United States (US)' }
  const dimensions = [
    { label: 'Source', rows: () => expectedBreakdown(visits, sourceOf, (v) => v ?? 'Direct') },
    { label: 'UTM campaign', rows: () => expectedBreakdown(visits, (v) => v.utm?.campaign ?? null, (v) => v ?? '(none)') },
    { label: 'Referrer', rows: () => expectedBreakdown(visits, referrerOf, (v) => v ?? 'Direct') },
    { label: 'Country', rows: () => expectedBreakdown(visits, (v) => v.country, (v) => (v === null ? '(unknown)' : countryName[v])) },
  ]
  const revenue = () => `€${(visits.filter((v) => v.buys).length * Number(AMOUNT)).toFixed(2)}`
  t.same(dimensions[1].rows().at(-1), ['Other', '3', '3', '100%'], 'the test itself: campaigns beyond the ten shown make an Other row')

  for (const viewport of [{ width: 1280, height: 900 }, PHONE]) {
    const phone = viewport === PHONE
    const { page, context, pageErrors } = await openPage(browser, phone ? { viewport, isMobile: true, hasTouch: true } : { viewport })
    await logIn(page, server, user.email, user.password)
    await goalRow(page, 'Purchase').waitFor({ timeout: UI_TIMEOUT_MS })
    const goalsCard = page.getByRole('region', { name: 'Goals' })
    const revenueCell = (name: string) => goalRow(page, name).getByRole('cell').nth(5)
    t.equal((await revenueCell('Purchase').textContent())?.trim(), revenue(), `${viewport.width} px: the revenue of a goal with a currency, in it`)
    t.equal((await revenueCell('Visit /landing').textContent())?.trim(), '—', 'a goal without a currency shows none')
    const card = await goalsCard.boundingBox()
    const cell = await revenueCell('Purchase').boundingBox()
    t.ok(card && cell && cell.x >= card.x && cell.x + cell.width <= card.x + card.width, `${viewport.width} px: the revenue column lies inside its card`)

    await goalRow(page, 'Purchase').getByRole('button', { name: 'Purchase' }).click()
    const report = page.getByRole('region', { name: 'Report: Purchase' })
    const picker = report.getByRole('combobox', { name: 'Break down by' })
    t.same(await picker.getByRole('option').allTextContents(),
      ['Source', 'Referrer', 'UTM source', 'UTM medium', 'UTM campaign', 'Entry page', 'Device', 'Browser', 'OS', 'Country'], 'every dimension is offered')
    const shown = (label: string) => report.getByRole('table', { name: `Conversions by ${label}` })
    const rowsOf = (label: string) => shown(label).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent?.trim() ?? '')))
    for (const d of dimensions) {
      await picker.selectOption({ label: d.label })
      const want = d.rows()
      t.same(await eventually(() => rowsOf(d.label), (rows) => JSON.stringify(rows) === JSON.stringify(want)), want, `${viewport.width} px: by ${d.label}`)
    }
    t.same((await shown('Country').getByRole('columnheader').allTextContents()).map((s) => s.trim()), ['Country', 'Sessions', 'Conversions', 'Conversion rate'], 'the first column is named after the dimension')

    if (!phone) {
      // a purchase arrives from Germany: the breakdown and the revenue follow without a reload
      const requests: string[] = []
      page.on('request', (r) => r.url().includes('/api/goals/breakdown') && requests.push(r.url()))
      visits.push({ id: uid('late'), referrer: 'https://www.google.com/', utm: null, country: 'DE', buys: true })
      await postEvents(server, eventsOf(visits.at(-1)!, 3))
      const want = dimensions[3].rows()
      t.same(await eventually(() => rowsOf('Country'), (rows) => JSON.stringify(rows) === JSON.stringify(want)), want, 'the new conversion is counted under Germany, live')
      t.equal(await eventually(async () => (await revenueCell('Purchase').textContent())?.trim(), (v) => v === revenue()), revenue(), 'and in the revenue')
      t.ok(requests.length > 0 && requests.every((u) => new URL(u).searchParams.get('by') === 'country' && new URL(u).searchParams.get('limit') === '10'), 'it asks for the dimension shown, ten values')
    }

    // the table stays inside the report's card (scrolling inside it if it must), and so does the page
    const reportBox = await report.boundingBox()
    const scroller = await shown('Country').locator('xpath=..').boundingBox({ timeout: UI_TIMEOUT_MS })
    t.ok(reportBox && scroller && scroller.x >= reportBox.x && scroller.x + scroller.width <= reportBox.x + reportBox.width,
      `${viewport.width} px: the breakdown table lies inside its card`)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= viewport.width, `the page fits the ${viewport.width} px screen (it is ${width} px wide)`)
    // the screenshot shows the longest table: ten campaigns and Other
    await picker.selectOption({ label: 'UTM campaign' })
    await eventually(() => rowsOf('UTM campaign'), (rows) => rows.length === 11)
    await screenshot(page, phone ? 'dashboard-phone-breakdown' : 'dashboard-breakdown', report)
    t.same(pageErrors, [], 'no errors in the page')
    await context.close()
  }
})

t.test('GET / and its bundles carry entity tags; a matching If-None-Match answers 304', async (t) => {
  const page = await server.request('GET', '/')
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  t.equal(page.headers.get('cache-control'), 'no-cache', 'the page is revalidated')
  t.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/)
  const etag = page.headers.get('etag')
  t.match(etag, /^"[^"]+"$/, 'a strong entity tag')
  const again = await server.request('GET', '/', { headers: { 'if-none-match': etag! } })
  t.equal(again.status, 304)
  t.equal(again.text, '', 'no body with 304')
  t.equal((await server.request('GET', '/', { headers: { 'if-none-match': '"other"' } })).status, 200)

  const bundles = [...page.text.matchAll(/(?:src|href)="\/(dashboard-[A-Za-z0-9]+\.(?:js|css))"/g)].map((m) => m[1])
  t.equal(bundles.length, 2, 'the page names a script and a style sheet')
  for (const name of bundles) {
    const asset = await server.request('GET', `/${name}`, { headers: { 'accept-encoding': 'gzip' } })
    t.equal(asset.status, 200, name)
    t.match(asset.headers.get('cache-control'), /immutable/, `${name} is cached for good: its name changes with its content`)
    t.match(asset.headers.get('content-type'), name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/)
    t.equal(asset.headers.get('content-encoding'), 'gzip', 'gzipped for a client that takes gzip')
    const tag = asset.headers.get('etag')!
    t.equal((await server.request('GET', `/${name}`, { headers: { 'accept-encoding': 'gzip', 'if-none-match': tag } })).status, 304)
  }
})

t.test('an event goal with a property condition and a revenue currency, from the form', async (t) => {
  const site = (await createSite(server)).site_id
  const user = await createUser(server, [site])
  await postEvents(server, [
    customEvent(site, uid('s'), 'purchase', { properties: { plan: 'pro' }, revenue: { amount: '49.90', currency: 'EUR' } }),
    customEvent(site, uid('s'), 'purchase', { properties: { plan: 'free' }, revenue: { amount: '5', currency: 'EUR' } }),
  ])
  await server.settle()
  const { page, pageErrors } = await openPage(browser, { viewport: { width: 1280, height: 900 } })
  await logIn(page, server, user.email, user.password)
  await page.getByRole('combobox', { name: 'Goal type' }).selectOption({ label: 'Event' })
  await page.getByLabel('Event name').fill('purchase')
  await page.getByRole('button', { name: 'Add condition' }).click()
  await page.getByLabel('Condition 1 property').fill('plan')
  await page.getByRole('combobox', { name: 'Condition 1 operator' }).selectOption({ label: 'is' })
  await page.getByLabel('Condition 1 values').fill('pro, team')
  await page.getByLabel('Revenue currency').fill('eur')
  t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('placeholder'), 'Purchase (plan is pro or team)', 'the generated name names the condition')
  await page.getByRole('button', { name: 'Create goal' }).click()
  await goalRow(page, 'Purchase (plan is pro or team)').waitFor({ timeout: UI_TIMEOUT_MS })
  t.equal(await eventually(() => conversionsOf(page, 'Purchase (plan is pro or team)'), (v) => v === '1'), '1', 'only the pro purchase converts')
  const goals = (await server.admin('GET', `/api/goals?site_id=${site}`)).json?.goals ?? []
  t.same(goals.map((g: { match_properties: unknown; currency: string; revenue: { total: string } }) => [g.match_properties, g.currency, g.revenue.total]),
    [[[{ key: 'plan', op: 'is', values: ['pro', 'team'] }], 'EUR', '49.9000']], 'the server holds the condition and the currency')
  t.same(pageErrors, [], 'no uncaught errors in the page')
})
