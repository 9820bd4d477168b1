/**
 * The ingest baseline: a uWebSockets.js app that does the least a JSON ingest endpoint can do —
 * read the body, JSON.parse it, answer 202 {"status":"ok"} (single events and batches alike).
 * The ingest bench runs it beside the real service, under the same load and core pinning, so the
 * service's throughput is reported as a share of what uWS and V8 can do on this machine now.
 *
 * Prints `listening <port>` once bound. Env: BARE_HOST (127.0.0.1), BARE_PORT (0 = any free port).
 */
import { OK, answer, serveBaseline } from './lib/uws-baseline.mjs'

serveBaseline('bare-uws', (res) => answer(res, '202 Accepted', OK))
