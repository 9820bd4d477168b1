// A second instance on a port that is already taken must not start: uWS would otherwise listen
// with SO_REUSEPORT and the two would silently share the requests, each with its own data.
import t from 'tap'
import { startExpectingExit, startServer } from './helpers/index.js'

t.test('a port already taken stops start-up with a clear error; the first instance keeps serving', async (t) => {
  const first = await startServer({ t })
  const second = await startExpectingExit({ t, env: { GOALPOST_PORT: String(first.port) } })
  t.not(second.code, 0, `exits non-zero (code ${second.code})`)
  t.match(second.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}: another process has the port`), second.stderr.trim())
  for (let i = 0; i < 20; i++) t.equal((await first.request('GET', '/readyz')).status, 200, `request ${i} reaches the first instance`)
})
