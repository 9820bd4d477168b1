/**
 * The ingest baseline: a uWebSockets.js app that does the least a JSON ingest endpoint can do —
 * read the body, JSON.parse it, answer 202 {"status":"ok"}. The ingest bench runs it beside the
 * real service, under the same load and core pinning, so the service's throughput is reported as
 * a share of what uWS and V8 can do on this machine at this moment.
 *
 * Prints `listening <port>` once bound. Env: BARE_HOST (127.0.0.1), BARE_PORT (0 = any free port).
 */
import { loadUws } from '../dist/http/index.js'

const uws = loadUws()
const OK = '{"status":"ok"}'
const BAD = '{"error":"body is not valid JSON"}'

function answer(res, status, body) {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(body)
  })
}

const app = uws.App().post('/api/event', (res) => {
  let aborted = false
  res.onAborted(() => {
    aborted = true
  })
  const chunks = []
  res.onData((ab, isLast) => {
    // uWS reuses the ArrayBuffer once this callback returns, so the service copies it too
    chunks.push(Buffer.from(ab.slice(0)))
    if (!isLast || aborted) return
    let ok = true
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      ok = false
    }
    answer(res, ok ? '202 Accepted' : '400 Bad Request', ok ? OK : BAD)
  })
})

app.listen(process.env.BARE_HOST ?? '127.0.0.1', Number(process.env.BARE_PORT ?? 0), (socket) => {
  if (!socket) {
    process.stderr.write('bare-uws: cannot listen\n')
    process.exit(1)
  }
  process.stdout.write(`listening ${uws.us_socket_local_port(socket)}\n`)
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
