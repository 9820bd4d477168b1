/**
 * HTTP load from a second process, pinned to the load core: wrk (C, epoll; it can push several
 * times what a JavaScript client can on one core, so a fast baseline is not capped by the
 * generator) for the ingest stream, or autocannon through its programmatic API in a child process
 * for fixed bodies. Both report the same shape, with latencies in ms.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LOAD_CORE, cpuSeconds, start, withTicker } from './proc.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
/** long enough that a stalled server shows as latency, not as requests quietly given up */
export const CLIENT_TIMEOUT_S = 30

let wrkFound
export function wrkInstalled() {
  wrkFound ??= spawnSync('wrk', ['-v'], { stdio: 'ignore' }).error === undefined
  return wrkFound
}

export function defaultDriver() {
  return wrkInstalled() ? 'wrk' : 'autocannon'
}

/**
 * @param o { driver, url, method, headers: { 'content-type', authorization? }, connections, seconds,
 *            label, workDir, quiet?, and either
 *            bodiesFile (autocannon: one body per line, cycled) or
 *            stream (wrk: { templatesFile, eventsPerSession, openSessions, sites, eventsPerRequest },
 *            the SyntheticStream of dist/cli built request by request in wrk-sequence.lua) }
 * @returns { driver, connections, seconds, requests, ok, non2xx, errors, okPerSec, latencyMs,
 *            loadCpu } — loadCpu: share of one core the generator used (≈1 means it was the limit)
 */
export async function runLoad(o) {
  if (o.stream && o.driver !== 'wrk') throw new Error('the ingest stream needs wrk (apt-get install -y wrk): a JavaScript load generator cannot outrun bare uWS on one core')
  const run = o.driver === 'wrk' ? runWrk(o) : runAutocannon(o)
  return o.quiet ? run : withTicker(o.label, o.seconds, run)
}

async function runWrk(o) {
  const url = new URL(o.url)
  const s = o.stream
  const common = ['wrk', '-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--timeout', `${CLIENT_TIMEOUT_S}s`]
  const argv = s === undefined
    // the same request over and over (a GET without headers of its own)
    ? [...common, '-s', join(HERE, 'wrk-get.lua'), `${url.origin}${url.pathname}${url.search}`]
    : [
        ...common, '-s', join(HERE, 'wrk-sequence.lua'),
        `${url.origin}${url.pathname}${url.search}`, '--',
        s.templatesFile, o.method, `${url.pathname}${url.search}`, o.headers['content-type'] ?? 'application/json', o.headers.authorization ?? '',
        String(s.eventsPerSession), String(s.openSessions), String(s.sites), String(s.eventsPerRequest),
      ]
  const child = start(argv, { core: LOAD_CORE })
  const cpu0 = cpuSeconds(child.pid)
  let cpu1 = cpu0
  const sampler = setInterval(() => (cpu1 = cpuSeconds(child.pid) || cpu1), 250)
  const { code } = await child.exited
  clearInterval(sampler)
  const m = /WRK_RESULT (\{.*\})/.exec(child.output)
  if (code !== 0 || !m) throw new Error(`wrk failed (exit ${code}):\n${child.output.slice(-3000)}`)
  const r = JSON.parse(m[1])
  const seconds = r.duration_us / 1e6
  const ok = r.requests - r.errors.status
  const us = (v) => v / 1000
  return {
    driver: 'wrk',
    connections: o.connections,
    seconds,
    requests: r.requests,
    ok,
    non2xx: r.errors.status,
    errors: r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout,
    errorsByKind: r.errors,
    okPerSec: ok / seconds,
    latencyMs: { n: r.latency_us.n, mean: us(r.latency_us.mean), p50: us(r.latency_us.p50), p90: us(r.latency_us.p90), p99: us(r.latency_us.p99), max: us(r.latency_us.max) },
    loadCpu: (cpu1 - cpu0) / seconds,
  }
}

async function runAutocannon(o) {
  const specFile = join(o.workDir, `autocannon-${process.pid}-${Date.now()}.json`)
  writeFileSync(specFile, JSON.stringify({
    url: o.url, method: o.method, headers: o.headers, bodiesFile: o.bodiesFile, connections: o.connections, seconds: o.seconds,
  }))
  const child = start([process.execPath, join(HERE, 'autocannon-child.mjs'), specFile], { core: LOAD_CORE })
  let cpu = 0
  const sampler = setInterval(() => (cpu = cpuSeconds(child.pid) || cpu), 250)
  const { code } = await child.exited
  clearInterval(sampler)
  const line = child.output.trim().split('\n').pop()
  if (code !== 0 || !line?.startsWith('{')) throw new Error(`autocannon failed (exit ${code}):\n${child.output.slice(-3000)}`)
  const r = JSON.parse(line)
  return {
    driver: 'autocannon',
    connections: o.connections,
    seconds: r.seconds,
    requests: r.requests,
    ok: r.ok,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    okPerSec: r.ok / r.seconds,
    latencyMs: r.latenciesMs,
    // includes the child's start-up; close enough to tell a saturated generator
    loadCpu: cpu / r.seconds,
  }
}
