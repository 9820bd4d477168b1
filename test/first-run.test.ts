// Surprises of a first run: a second instance on a taken port must not start (uWS would otherwise
// listen with SO_REUSEPORT and the two would silently share the requests, each with its own data);
// metric names carry the service prefix once.
import t from 'tap'
import { startExpectingExit, startServer } from './helpers/index.js'

t.test('a port already taken stops start-up with a clear error; the first instance keeps serving', async (t) => {
  const first = await startServer({ t })
  const second = await startExpectingExit({ t, env: { GOALPOST_PORT: String(first.port) } })
  t.not(second.code, 0, `exits non-zero (code ${second.code})`)
  t.match(second.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}: another process has the port`), second.stderr.trim())
  for (let i = 0; i < 20; i++) t.equal((await first.request('GET', '/readyz')).status, 200, `request ${i} reaches the first instance`)
})

t.test('metric names carry the service prefix once', async (t) => {
  const server = await startServer({ t })
  const text = (await server.request('GET', '/metrics')).text
  t.match(text, /^goalpost_process_cpu_user_seconds_total \S+$/m, 'goalpost_process_cpu_user_seconds_total')
  t.match(text, /^# TYPE goalpost_log_append_failures_total counter$/m, 'append failures are a counter')
  t.notMatch(text, /process_process|goalpost_goalpost/, 'no doubled words')
})
