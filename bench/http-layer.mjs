/**
 * The second ingest baseline: the service's own HTTP layer (HttpServer from dist/http: routing,
 * full body read, CORS, JSON answer) and its body parser, with an async handler that answers
 * 202 {"status":"ok"} — everything POST /api/event does except validating, appending to the log
 * and folding. Between bare-uws.mjs and the service it splits the gap into "HTTP layer" and
 * "ingest pipeline".
 *
 * Prints `listening <port>` once bound. Env: BARE_HOST (127.0.0.1), BARE_PORT (0 = any free port).
 */
import { HttpServer } from '../dist/http/index.js'
import { parseJsonBody } from '../dist/ingest/body.js'

const OK = { status: 'ok' }
const BODY_LIMITS = { '/api/event': 64 * 1024, '/api/events': 1024 * 1024 }

const server = new HttpServer({ onError: (err) => process.stderr.write(`http-layer: ${err?.stack ?? err}\n`) })
for (const [path, bodyLimit] of Object.entries(BODY_LIMITS)) {
  server.route('POST', path, async (req) => {
    const parsed = parseJsonBody(req.body)
    if (!parsed.ok) return { status: 400, body: { error: parsed.error } }
    return { status: 202, body: OK }
  }, { cors: true, bodyLimit, keepAlive: true })
}

const port = await server.listen(process.env.BARE_HOST ?? '127.0.0.1', Number(process.env.BARE_PORT ?? 0))
process.stdout.write(`listening ${port}\n`)
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
