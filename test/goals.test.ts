// docs/api.md §3 and §4 — goal records: create, normalize, name, validate, list, days, rename, delete, suggestions.
import t from 'tap'
import {
  addDays, createGoal, createSite, customEvent, dateInZone, getGoals, goalIn, isError,
  namesField, pageview, pollUntil, postEvents, settledGoals, startServer, uid, type EventBody, type GoalsAnswer,
} from './helpers/index.js'

const server = await startServer({ t })
/** docs/api.md: instants are ISO 8601 UTC */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/
const newSite = async (timezone?: string) => (await createSite(server, timezone ? { timezone } : {})).site_id
const post = (body: unknown) => server.admin('POST', '/api/goals', body)

t.test('create: 201 with the goal record', async (t) => {
  const site = await newSite()
  const page = await post({ site_id: site, goal_type: 'pageview', match_path: '/pricing/' })
  t.equal(page.status, 201, page.text)
  t.type(page.json?.id, 'string')
  t.ok(String(page.json?.id).length > 0)
  t.equal(page.json?.site_id, site)
  t.equal(page.json?.name, 'Visit /pricing')
  t.equal(page.json?.goal_type, 'pageview')
  t.equal(page.json?.match_path, '/pricing', 'stored normalized')
  t.notOk(page.json?.match_event, 'no match_event on a page goal')
  t.match(page.json?.created_at, ISO)
  t.ok(Math.abs(Date.parse(page.json?.created_at) - Date.now()) < 60_000, 'created_at is now')

  const event = await post({ site_id: site, goal_type: 'custom_event', match_event: 'add_to_cart' })
  t.equal(event.status, 201, event.text)
  t.equal(event.json?.goal_type, 'custom_event')
  t.equal(event.json?.match_event, 'add_to_cart')
  t.equal(event.json?.name, 'Add to cart')
  t.notOk(event.json?.match_path, 'no match_path on an event goal')
  t.not(event.json?.id, page.json?.id, 'ids are distinct')

  const named = await post({ site_id: site, goal_type: 'custom_event', match_event: 'signup', name: 'Signed up' })
  t.equal(named.json?.name, 'Signed up', 'a given name is kept')
})

t.test('"page" and "path" are aliases of "pageview"', async (t) => {
  const site = await newSite()
  for (const alias of ['page', 'path']) {
    const reply = await post({ site_id: site, goal_type: alias, match_path: `/${alias}-alias` })
    t.equal(reply.status, 201, reply.text)
    t.equal(reply.json?.goal_type, 'pageview', `${alias} is answered as pageview`)
  }
  const listed = (await getGoals(server, site)).json as GoalsAnswer
  t.same(listed.goals.map((g) => g.goal_type), ['pageview', 'pageview'])
})

t.test('match_path is normalized before it is stored and named', async (t) => {
  const site = await newSite()
  const cases: [string, string][] = [
    ['/pricing/', '/pricing'], ['/docs//', '/docs'], ['/a?x=1', '/a'], ['/b#frag', '/b'], ['/c/?x=1#y', '/c'],
    ['/', '/'], ['/%7Euser', '/%7Euser'], ['/Blog/*', '/Blog/*'], ['/blog/**/', '/blog/**'],
  ]
  const ids = new Map<string, string>()
  for (const [input, stored] of cases) {
    const reply = await post({ site_id: site, goal_type: 'pageview', match_path: input })
    t.equal(reply.status, 201, `${input}: ${reply.text}`)
    t.equal(reply.json?.match_path, stored, `${input} → ${stored}`)
    t.equal(reply.json?.name, `Visit ${stored}`)
    ids.set(stored, reply.json?.id)
  }
  for (const [input, stored] of [['/?x=1', '/'], ['/pricing', '/pricing'], ['/docs/', '/docs'], ['/blog/**?q', '/blog/**']]) {
    const reply = await post({ site_id: site, goal_type: 'pageview', match_path: input })
    isError(t, reply, 409, undefined, `${input} is compared for duplicates as ${stored}`)
    t.equal(reply.json?.id, ids.get(stored), `409 names the goal of ${stored}`)
  }
})

t.test('generated names for event goals', async (t) => {
  const site = await newSite()
  const cases: [string, string][] = [
    ['add_to_cart', 'Add to cart'], ['sign-up.completed', 'Sign up completed'], ['__add__to--cart..', 'Add to cart'],
    ['checkout', 'Checkout'], ['Purchase Done', 'Purchase Done'], ['a  b', 'A b'], ['ünïcode_name', 'Ünïcode name'],
    ['123_go', '123 go'], ['x._-y', 'X y'],
  ]
  for (const [event, name] of cases) {
    const reply = await post({ site_id: site, goal_type: 'custom_event', match_event: event })
    t.equal(reply.status, 201, reply.text)
    t.equal(reply.json?.name, name, `${JSON.stringify(event)} → ${JSON.stringify(name)}`)
  }
  for (const blank of ['', '   ', null]) {
    const reply = await post({ site_id: site, goal_type: 'pageview', match_path: `/blank-${uid('b')}`, name: blank })
    t.equal(reply.status, 201, reply.text)
    t.equal(reply.json?.name, `Visit ${reply.json?.match_path}`, `name ${JSON.stringify(blank)} is generated`)
  }
})

t.test('names are at most 256 characters', async (t) => {
  const site = await newSite()
  const n256 = 'n'.repeat(256)
  const ok = await post({ site_id: site, goal_type: 'pageview', match_path: '/long-name', name: n256 })
  t.equal(ok.status, 201, ok.text)
  t.equal(ok.json?.name, n256)
  namesField(t, await post({ site_id: site, goal_type: 'pageview', match_path: '/too-long', name: n256 + 'n' }), 'name')
  const longPath = '/' + 'a'.repeat(300)
  const generated = await post({ site_id: site, goal_type: 'pageview', match_path: longPath })
  t.equal(generated.status, 201, generated.text)
  const name = String(generated.json?.name)
  t.ok(name.length <= 256, `a generated name is cut to 256 (${name.length})`)
  t.ok(`Visit ${longPath}`.startsWith(name) && name.length > 200, 'and is a prefix of the full name')
  const longEvent = await post({ site_id: site, goal_type: 'custom_event', match_event: 'e'.repeat(256) })
  t.equal(longEvent.json?.name, 'E' + 'e'.repeat(255))
})

t.test('invalid goals: 400 naming the field', async (t) => {
  const site = await newSite()
  const cases: [string, unknown][] = [
    ['site_id', { goal_type: 'pageview', match_path: '/' }],
    ['goal_type', { site_id: site, match_path: '/' }],
    ['goal_type', { site_id: site, goal_type: 'click', match_path: '/' }],
    ['goal_type', { site_id: site, goal_type: 'PageView', match_path: '/' }],
    ['match_path', { site_id: site, goal_type: 'pageview' }],
    ['match_path', { site_id: site, goal_type: 'pageview', match_path: '' }],
    ['match_path', { site_id: site, goal_type: 'pageview', match_path: 'pricing' }],
    ['match_path', { site_id: site, goal_type: 'pageview', match_path: '/a/***' }],
    ['match_path', { site_id: site, goal_type: 'pageview', match_path: '/****' }],
    ['match_path', { site_id: site, goal_type: 'page', match_path: 5 }],
    ['match_event', { site_id: site, goal_type: 'custom_event' }],
    ['match_event', { site_id: site, goal_type: 'custom_event', match_event: '' }],
    ['match_event', { site_id: site, goal_type: 'custom_event', match_path: '/x' }],
    ['name', { site_id: site, goal_type: 'custom_event', match_event: 'x', name: 5 }],
  ]
  for (const [field, body] of cases) namesField(t, await post(body), field, 400, JSON.stringify(body))
  isError(t, await post('{"site_id":'), 400, undefined, 'not JSON')
  const answer = (await getGoals(server, site)).json as GoalsAnswer
  t.same(answer.goals, [], 'nothing was created')
})

t.test('a duplicate (same site, type and match) is refused with 409 and the existing id', async (t) => {
  const site = await newSite()
  const page = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/dup' })
  const event = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'Signup' })
  for (const body of [
    { site_id: site, goal_type: 'pageview', match_path: '/dup' },
    { site_id: site, goal_type: 'pageview', match_path: '/dup/', name: 'Other name' },
    { site_id: site, goal_type: 'page', match_path: '/dup?x=1' },
  ]) {
    const reply = await post(body)
    isError(t, reply, 409, undefined, JSON.stringify(body))
    t.equal(reply.json?.id, page.id, 'the existing id')
  }
  const again = await post({ site_id: site, goal_type: 'custom_event', match_event: 'Signup' })
  isError(t, again, 409)
  t.equal(again.json?.id, event.id)
  t.equal((await post({ site_id: site, goal_type: 'custom_event', match_event: 'signup' })).status, 201, 'event names are case-sensitive')
  t.equal((await post({ site_id: site, goal_type: 'custom_event', match_event: '/dup' })).status, 201, 'another type is not a duplicate')
  t.equal((await post({ site_id: site, goal_type: 'pageview', match_path: '/Dup' })).status, 201, 'paths are case-sensitive')
  t.equal((await post({ site_id: await newSite(), goal_type: 'pageview', match_path: '/dup' })).status, 201, 'another site is not a duplicate')
})

t.test('goals are listed in creation order with their fields', async (t) => {
  const site = await newSite()
  const created = []
  for (const body of [
    { goal_type: 'custom_event', match_event: 'zeta' }, { goal_type: 'pageview', match_path: '/alpha' },
    { goal_type: 'custom_event', match_event: 'alpha' }, { goal_type: 'pageview', match_path: '/' },
  ]) created.push(await createGoal(server, { site_id: site, ...body }))
  const reply = await getGoals(server, site, 7)
  t.equal(reply.status, 200, reply.text)
  const answer = reply.json as GoalsAnswer
  t.same(answer.goals.map((g) => g.id), created.map((g) => g.id), 'creation order')
  for (const [i, g] of answer.goals.entries()) {
    const c = created[i]
    t.same({ id: g.id, site_id: g.site_id, name: g.name, goal_type: g.goal_type, created_at: g.created_at },
      { id: c.id, site_id: site, name: c.name, goal_type: c.goal_type, created_at: c.created_at })
    t.equal(g.match_path ?? g.match_event, c.match_path ?? c.match_event)
    t.equal(g.conversions, 0)
    t.equal(g.conversion_rate, 0, '0 when there are no sessions')
  }
  t.equal(answer.total_sessions, 0)
  t.equal(answer.site_id, site)
  t.equal(answer.days, 7)
})

t.test('days: an integer 1..retention, default 30, anything else 400 naming days', async (t) => {
  const site = await newSite()
  for (const days of ['0', '91', '1.5', 'abc', '-1', '7days', '100000']) {
    namesField(t, await server.admin('GET', `/api/goals?site_id=${site}&days=${days}`), 'days', 400, `days=${days}`)
  }
  for (const days of [1, 7, 90]) {
    const reply = await getGoals(server, site, days)
    t.equal(reply.status, 200, reply.text)
    t.equal(reply.json?.days, days)
    t.equal(reply.json?.from, addDays(reply.json?.to, -(days - 1)), `from is ${days - 1} days before to`)
  }
  const byDefault = await getGoals(server, site)
  t.equal(byDefault.json?.days, 30, 'default 30')
  t.equal(byDefault.json?.from, addDays(byDefault.json?.to, -29))
})

t.test('from, to and timezone are calendar dates of the site time zone', async (t) => {
  for (const zone of ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Europe/Berlin', 'Asia/Kolkata']) {
    const site = await newSite(zone === 'UTC' ? undefined : zone)
    const before = dateInZone(Date.now(), zone)
    const reply = await getGoals(server, site, 7)
    const after = dateInZone(Date.now(), zone)
    t.equal(reply.status, 200, reply.text)
    t.equal(reply.json?.timezone, zone)
    t.ok([before, after].includes(reply.json?.to), `${zone}: to ${reply.json?.to} is today there (${before})`)
    t.equal(reply.json?.from, addDays(reply.json?.to, -6))
  }
})

t.test('PATCH renames; a blank name regenerates it; no name is 400', async (t) => {
  const site = await newSite()
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/rename', name: 'First' })
  const patch = (body: unknown, id = goal.id) => server.admin('PATCH', `/api/goals?id=${encodeURIComponent(id)}`, body)
  const renamed = await patch({ name: 'Second' })
  t.equal(renamed.status, 200, renamed.text)
  t.same(renamed.json, { ...goal, name: 'Second' }, 'the goal, renamed, otherwise unchanged')
  t.equal(((await getGoals(server, site)).json as GoalsAnswer).goals[0]?.name, 'Second', 'the list shows the new name')
  for (const blank of ['', '  ']) {
    const reply = await patch({ name: blank })
    t.equal(reply.status, 200, reply.text)
    t.equal(reply.json?.name, 'Visit /rename', `${JSON.stringify(blank)} regenerates the name`)
  }
  t.equal((await patch({ name: 'n'.repeat(256) })).json?.name, 'n'.repeat(256))
  namesField(t, await patch({}), 'name', 400, 'no name')
  namesField(t, await patch({ name: 5 }), 'name', 400, 'a number')
  namesField(t, await patch({ name: 'n'.repeat(257) }), 'name', 400, '257 characters')
  namesField(t, await server.admin('PATCH', '/api/goals', { name: 'x' }), 'id', 400, 'no id')
  isError(t, await patch({ name: 'x' }, 'no-such-goal'), 404)
  const event = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'checkout_done', name: 'Paid' })
  t.equal((await patch({ name: '' }, event.id)).json?.name, 'Checkout done')
})

t.test('DELETE answers 204, then the goal is gone (404)', async (t) => {
  const site = await newSite()
  const keep = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/keep' })
  const gone = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/gone' })
  await postEvents(server, [pageview(site, uid('s'), '/gone')])
  const del = await server.admin('DELETE', `/api/goals?id=${gone.id}`)
  t.equal(del.status, 204, del.text)
  t.equal(del.text, '', 'a 204 has no body')
  const listed = ((await getGoals(server, site)).json as GoalsAnswer).goals.map((g) => g.id)
  t.same(listed, [keep.id])
  isError(t, await server.admin('DELETE', `/api/goals?id=${gone.id}`), 404, undefined, 'deleting twice')
  isError(t, await server.admin('PATCH', `/api/goals?id=${gone.id}`, { name: 'x' }), 404, undefined, 'renaming a deleted goal')
  isError(t, await server.admin('GET', `/api/goals/sessions?id=${gone.id}`), 404, undefined, 'expanding a deleted goal')
  isError(t, await server.admin('DELETE', '/api/goals?id=no-such-goal'), 404)
  namesField(t, await server.admin('DELETE', '/api/goals'), 'id', 400, 'no id')
  const again = await post({ site_id: site, goal_type: 'pageview', match_path: '/gone' })
  t.equal(again.status, 201, 'the same goal can be created again')
  const answer = await settledGoals(server, site, 7, (a) => goalIn(a, again.json?.id)?.conversions === 1)
  t.equal(goalIn(answer, again.json?.id)?.conversions, 1, 'and counts the retained events')
})

t.test('suggestions: paths and event names seen, most sessions first, filtered by prefix', async (t) => {
  const site = await newSite()
  const visits: [string, string[]][] = [['/pricing', ['a', 'b', 'c', 'd']], ['/about', ['a', 'b', 'c']], ['/pro', ['a', 'b']], ['/contact', ['a']]]
  const events: [string, string[]][] = [['purchase', ['a', 'b', 'c', 'd']], ['signup', ['a', 'b', 'c']], ['sign_in', ['a', 'b']], ['share', ['a']]]
  const tag = uid('x')
  const batch: EventBody[] = []
  for (const [path, sessions] of visits) for (const s of sessions) batch.push(pageview(site, `${tag}-${s}`, path), pageview(site, `${tag}-${s}`, path))
  for (const [name, sessions] of events) for (const s of sessions) batch.push(customEvent(site, `${tag}-${s}`, name))
  await postEvents(server, batch)
  await server.settle()
  const suggest = async (query: string) => {
    const reply = await server.admin('GET', `/api/goals/suggestions?site_id=${site}&${query}`)
    t.equal(reply.status, 200, `${query}: ${reply.text.slice(0, 200)}`)
    return (reply.json?.suggestions ?? []) as { value: string; sessions: number }[]
  }
  const paths = await pollUntil(() => suggest('kind=path'), (s) => s.length >= 4, 3000)
  t.same(paths, [{ value: '/pricing', sessions: 4 }, { value: '/about', sessions: 3 }, { value: '/pro', sessions: 2 }, { value: '/contact', sessions: 1 }])
  t.same((await suggest('kind=path&q=/pr')).map((s) => s.value), ['/pricing', '/pro'])
  t.same((await suggest('kind=path&q=/pri&limit=20')).map((s) => s.value), ['/pricing'])
  t.same((await suggest('kind=path&limit=2')).map((s) => s.value), ['/pricing', '/about'])
  t.same(await suggest('kind=path&q=/nothing'), [])
  const manyPaths = Array.from({ length: 25 }, (_, i) => pageview(site, `${tag}-many-${i}`, `/many/${String(i).padStart(2, '0')}`))
  await postEvents(server, manyPaths)
  await server.settle()
  const many = await pollUntil(() => suggest('kind=path&q=/many/'), (s) => s.length >= 20, 3000)
  t.equal(many.length, 20, 'at most 20 suggestions by default')
  t.same(await suggest('kind=event'), [{ value: 'purchase', sessions: 4 }, { value: 'signup', sessions: 3 }, { value: 'sign_in', sessions: 2 }, { value: 'share', sessions: 1 }])
  t.same((await suggest('kind=event&q=sign')).map((s) => s.value), ['signup', 'sign_in'])
  namesField(t, await server.admin('GET', `/api/goals/suggestions?site_id=${site}&kind=referrer`), 'kind')
  namesField(t, await server.admin('GET', '/api/goals/suggestions?kind=path'), 'site_id')
})

t.test('goals per site are capped by GOALPOST_MAX_GOALS_PER_SITE: one more answers 409 naming the limit', async (t) => {
  const capped = await startServer({ t, env: { GOALPOST_MAX_GOALS_PER_SITE: '3' } })
  const site = (await createSite(capped)).site_id
  const made = []
  for (let i = 0; i < 3; i++) made.push(await createGoal(capped, { site_id: site, goal_type: 'custom_event', match_event: `e${i}` }))
  const over = await capped.admin('POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'e3' })
  t.equal(over.status, 409)
  t.match((over.json as { error: string }).error, /already has 3 goals, the most GOALPOST_MAX_GOALS_PER_SITE allows/)
  const twin = await capped.admin('POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'e0' })
  t.equal(twin.status, 409, 'a duplicate at the limit is still a duplicate')
  t.equal((twin.json as { id: string }).id, made[0].id)
  t.equal((await capped.admin('DELETE', `/api/goals?id=${made[1].id}`)).status, 204)
  t.equal((await capped.admin('POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'e3' })).status, 201, 'room again after a deletion')
  const other = (await createSite(capped)).site_id
  t.equal((await capped.admin('POST', '/api/goals', { site_id: other, goal_type: 'custom_event', match_event: 'e0' })).status, 201, 'the cap is per site')
})
