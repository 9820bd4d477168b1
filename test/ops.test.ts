// API.md §5 — health, readiness, metrics, the OpenAPI document; §3 freshness.
import t from 'tap'
import {
  FRESHNESS_MS, createGoal, createSite, getGoals, goalIn, isError, pageview, postEvent, sleep, startServer, uid,
  type GoalsAnswer,
} from './helpers/index.js'

const server = await startServer({ t })

/** Sum of the samples of every counter whose name mentions `word`, from Prometheus text. */
function counterSum(text: string, word: string): { sum: number; names: string[] } {
  const counters = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) counter$/gm)) counters.add(m[1]!)
  const names = [...counters].filter((n) => n.includes(word))
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (!m) continue
    const name = m[1]!
    if (names.some((n) => name === n || name === `${n}_total`)) sum += Number(m[3])
  }
  return { sum, names }
}

t.test('GET /healthz and /readyz answer 200', async (t) => {
  t.equal((await server.request('GET', '/healthz')).status, 200)
  t.equal((await server.request('GET', '/readyz')).status, 200)
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
    '/api/sites', '/api/users', '/api/login', '/api/logout', '/api/keys']) {
    t.ok(paths.includes(path), `documents ${path}`)
  }
  const event = reply.json?.paths?.['/api/event']
  t.ok(event?.post, 'POST /api/event is documented')
  t.ok(reply.json?.paths?.['/api/goals']?.get && reply.json?.paths?.['/api/goals']?.post, 'GET and POST /api/goals')
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
    t.equal(goalIn(answer!, goal.id)?.conversions, i, `event ${i}: counted as a conversion`)
  }
})
