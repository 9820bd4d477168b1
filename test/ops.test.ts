// docs/api.md §5 — health, readiness, metrics, the OpenAPI document; §3 freshness.
import t from 'tap'
import {
  FRESHNESS_MS, UA, createGoal, createSite, daysAgo, getGoals, goalIn, isError, namesField, pageview, postEvent,
  settledGoals, sleep, startServer, uid, type GoalsAnswer,
} from './helpers/index.js'

const server = await startServer({ t })

/** Sum of the samples of every counter whose name mentions `word`, from Prometheus text. */
function counterSum(text: string, word: string): { sum: number; names: string[] } {
  const counters = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) counter$/gm)) counters.add(m[1])
  const names = [...counters].filter((n) => n.includes(word))
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (!m) continue
    const name = m[1]
    if (names.some((n) => name === n || name === `${n}_total`)) sum += Number(m[3])
  }
  return { sum, names }
}

t.test('GET /healthz and /readyz answer 200; /readyz answered only 503 before that', async (t) => {
  t.equal((await server.request('GET', '/healthz')).status, 200)
  t.equal((await server.request('GET', '/readyz')).status, 200)
  const seen = server.readyStatuses()
  t.equal(seen.at(-1), 200)
  t.ok(seen.slice(0, -1).every((s) => s === 503), `while starting: ${seen.join(', ')}`)
  isError(t, await server.request('POST', '/healthz', { body: {} }), 405, undefined, 'POST /healthz')
})

t.test('GET /metrics is Prometheus text with ingest counters that move', async (t) => {
  const before = await server.request('GET', '/metrics')
  t.equal(before.status, 200)
  t.match(before.headers.get('content-type') ?? '', /^text\/plain/, 'text/plain content type')
  t.match(before.text, /^# HELP \S+ .+$/m, 'HELP lines')
  t.match(before.text, /^# TYPE \S+ (counter|gauge|histogram|summary)$/m, 'TYPE lines')
  const start = counterSum(before.text, 'ingest')
  t.ok(start.names.length > 0, `an ingest counter exists (${start.names.join(', ')})`)
  const site = (await createSite(server)).site_id
  for (let i = 0; i < 3; i++) t.equal((await postEvent(server, pageview(site, uid('s'), '/'))).status, 202)
  const after = counterSum((await server.request('GET', '/metrics')).text, 'ingest')
  t.ok(after.sum >= start.sum + 3, `ingest counters grew by at least 3 (${start.sum} → ${after.sum})`)
  const types = [...before.text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => ({ name: m[1], type: m[2] }))
  t.ok(types.some((m) => /ingest/.test(m.name) && /histogram|summary/.test(m.type)), 'an ingest latency histogram or summary')
  t.ok(types.some((m) => /lag/.test(m.name) && !/eventloop/.test(m.name)), 'a log lag metric')
})

t.test('GET /api/openapi.json is an OpenAPI 3.1 document of the API', async (t) => {
  const reply = await server.request('GET', '/api/openapi.json')
  t.equal(reply.status, 200)
  t.match(reply.headers.get('content-type') ?? '', /application\/json/)
  t.match(reply.json?.openapi, /^3\.1\.\d+$/, 'openapi 3.1.x')
  t.type(reply.json?.info?.title, 'string')
  t.type(reply.json?.info?.version, 'string')
  const paths = Object.keys(reply.json?.paths ?? {})
  for (const path of ['/api/event', '/api/events', '/api/goals', '/api/goals/sessions', '/api/goals/suggestions',
    '/api/sites', '/api/users', '/api/login', '/api/logout', '/api/keys', '/api/session', '/api/live', '/']) {
    t.ok(paths.includes(path), `documents ${path}`)
  }
  const event = reply.json?.paths?.['/api/event']
  t.ok(event?.post, 'POST /api/event is documented')
  t.ok(reply.json?.paths?.['/api/goals']?.get && reply.json?.paths?.['/api/goals']?.post, 'GET and POST /api/goals')
})

t.test('the OpenAPI event schema is the one that validates', async (t) => {
  const doc = (await server.request('GET', '/api/openapi.json')).json
  const resolve = (schema: any): any => {
    const ref = schema?.$ref
    if (typeof ref !== 'string') return schema
    return ref.split('/').slice(1).reduce((node: any, part: string) => node?.[part], doc)
  }
  const body = doc?.paths?.['/api/event']?.post?.requestBody?.content
  const schema = resolve((body?.['application/json'] ?? Object.values(body ?? {})[0] as any)?.schema)
  t.same([...(schema?.required ?? [])].sort(), ['session_id', 'site_id', 'type'], 'type, site_id and session_id are required')
  const type = resolve(schema?.properties?.type)
  const types = type?.enum ?? (type?.anyOf ?? type?.oneOf ?? []).map((s: any) => s.const ?? s.enum?.[0])
  t.same([...types].sort(), ['button_click', 'copy', 'custom_event', 'error', 'external_link', 'form_submit', 'identify',
    'pageleave', 'pageview', 'payment', 'web_vitals'], 'the eleven types')
  t.equal(resolve(schema?.properties?.session_id)?.maxLength, 128)
  t.equal(resolve(schema?.properties?.path)?.maxLength, 2048)
})

t.test('GOALPOST_RETENTION_DAYS bounds days and event age; GOALPOST_BOT_FILTER=false counts bots', async (t) => {
  const other = await startServer({ t, env: { GOALPOST_RETENTION_DAYS: '10', GOALPOST_BOT_FILTER: 'false' } })
  const site = (await createSite(other)).site_id
  t.equal((await getGoals(other, site, 10)).status, 200, 'days=10 with a 10-day retention')
  namesField(t, await getGoals(other, site, 11), 'days', 400, 'days=11 with a 10-day retention')
  t.equal((await postEvent(other, pageview(site, uid('s'), '/', { timestamp: daysAgo(8) }))).status, 202, '8 days old')
  namesField(t, await postEvent(other, pageview(site, uid('s'), '/', { timestamp: daysAgo(12) })), 'timestamp', 400, '12 days old')
  t.equal((await postEvent(other, pageview(site, uid('bot'), '/', { user_agent: UA.googlebot }))).status, 202)
  const answer = await settledGoals(other, site, 10, (a) => a.total_sessions >= 2)
  t.equal(answer.total_sessions, 2, 'the bot is counted when the filter is off')
})

t.test('freshness: an acknowledged event is counted within 1 s', async (t) => {
  const site = (await createSite(server)).site_id
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/fresh' })
  for (let i = 1; i <= 4; i++) {
    const reply = await postEvent(server, pageview(site, uid('f'), '/fresh'))
    const ackedAt = Date.now()
    t.equal(reply.status, 202)
    let answer: GoalsAnswer | undefined
    for (;;) {
      answer = (await getGoals(server, site, 2)).json as GoalsAnswer
      if (answer.total_sessions >= i && (goalIn(answer, goal.id)?.conversions ?? 0) >= i) break
      if (Date.now() - ackedAt > FRESHNESS_MS) break
      await sleep(20)
    }
    t.equal(answer?.total_sessions, i, `event ${i}: counted in total_sessions within ${Date.now() - ackedAt} ms`)
    t.equal(goalIn(answer, goal.id)?.conversions, i, `event ${i}: counted as a conversion`)
  }
})
