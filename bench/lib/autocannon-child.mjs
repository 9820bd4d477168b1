/**
 * One autocannon run in its own process, so the load generator never shares an event loop (or a
 * core, once pinned) with the server it measures. Usage: node autocannon-child.mjs <spec.json>
 *
 * spec: { url, method, headers, bodiesFile?, connections, seconds }
 * bodiesFile holds one request body per line; requests cycle through them in order.
 *
 * Prints one JSON line: { requests, ok, non2xx, errors, timeouts, seconds, latenciesMs: {...} }.
 * Latencies are collected from every response as floats: autocannon's own histogram keeps whole
 * milliseconds, too coarse for sub-millisecond answers.
 */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { summarize } from './stats.mjs'

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const bodies = spec.bodiesFile ? readFileSync(spec.bodiesFile, 'utf8').split('\n').filter(Boolean) : []

let next = 0
const request = { method: spec.method ?? 'GET', headers: spec.headers ?? {} }
if (bodies.length > 0) {
  // a per-request body: autocannon rebuilds the request buffer, a few µs each
  request.setupRequest = (req) => {
    req.body = bodies[next++ % bodies.length]
    return req
  }
}

const latencies = []
let ok = 0
let non2xx = 0
const instance = autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  requests: [request],
  timeout: 30,
})
instance.on('response', (_client, statusCode, _bytes, ms) => {
  if (statusCode >= 200 && statusCode < 300) {
    ok++
    latencies.push(ms)
  } else non2xx++
})
instance.on('done', (r) => {
  process.stdout.write(
    JSON.stringify({
      requests: ok + non2xx,
      ok,
      non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      seconds: r.duration,
      latenciesMs: summarize(latencies),
    }) + '\n',
  )
})
