/**
 * Ingest, side by side in one run: the bare uWS server (parse, 202), the durable minimum (bare +
 * group commit: one write + fdatasync per batch of waiting requests, 202 after it) and the service
 * (`node dist/main.js`, fresh data directory on disk), each pinned to the server core while wrk on
 * the load core drives the same stream at each of them in turn.
 *
 * The stream is real traffic's shape: ever-new sessions (`fresh`: every request opens one; `mix`:
 * ~6 events per session), built request by request by wrk-sequence.lua from the templates of the
 * CLI's SyntheticStream, at each connection count, with a 30 s client timeout so that a stall shows
 * as latency. Then POST /api/events with 100-event batches. For the service it also reads the
 * event-loop delay from its /metrics and checks afterwards that it counted what it acknowledged.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BENCH_GOALS, SyntheticStream, parseMix, setUpSites } from '../dist/cli/index.js'
import { metricValue, metrics, settledMetric, sleep, waitFolded } from './lib/http.mjs'
import { runLoad } from './lib/load.mjs'
import { SERVER_CORE, cpuSeconds, freePort, log, memoryOf, start, stop, waitForOutput } from './lib/proc.mjs'
import { ratio } from './lib/stats.mjs'
import { verifyPhase } from './ingest-verify.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const GOALS = BENCH_GOALS.slice(0, 3)
const ACCEPTED = ['goalpost_ingest_events_total', { outcome: 'accepted' }]
/** prom-client's default metrics: monitorEventLoopDelay at 10 ms resolution, reset at every scrape */
const LOOP_DELAY_MAX = 'goalpost_nodejs_eventloop_lag_max_seconds'
const LOOP_DELAY_P99 = 'goalpost_nodejs_eventloop_lag_p99_seconds'

export const SERVERS = {
  bare: { label: 'bare uWS', script: 'bare-uws.mjs' },
  durable: { label: 'durable min', script: 'durable-min.mjs' },
  floor: { label: 'floor', script: 'durable-floor.mjs' },
  layer: { label: 'HTTP layer', script: 'http-layer.mjs' },
  service: { label: 'goalpost' },
}

/**
 * @param o { seconds, warmupSeconds, connections: number[], shapes: ('fresh'|'mix')[], eventsPerSession,
 *            openSessions, mix (spec string), batchSize, batchConnections, servers: (keyof SERVERS)[],
 *            driver, profileDir? }
 */
export async function benchIngest(o) {
  const work = await mkdtemp(join(tmpdir(), 'goalpost-bench-'))
  const running = []
  try {
    const phases = planPhases(o)
    const run = randomBytes(3).toString('hex')
    const mix = parseMix(o.mix)
    const streamOf = (siteId, eventsPerSession) => new SyntheticStream({ siteIds: [siteId], goals: GOALS, mix, eventsPerSession, openSessions: o.openSessions, run })
    for (const p of phases) {
      p.stream = streamOf(p.siteId, p.eventsPerSession)
      p.templatesFile = join(work, `${p.siteId}.templates`)
      await writeFile(p.templatesFile, p.stream.templates().join('\n') + '\n')
    }
    const warm = { siteId: 'warm-up', eventsPerSession: 1, eventsPerRequest: 1, connections: 64, path: '/api/event' }
    warm.stream = streamOf(warm.siteId, 1)
    warm.templatesFile = join(work, 'warm-up.templates')
    await writeFile(warm.templatesFile, warm.stream.templates().join('\n') + '\n')
    log(`ingest: ${phases.map((p) => p.name).join(', ')}; servers ${o.servers.map((s) => SERVERS[s].label).join(', ')}; ${o.seconds} s each, driver ${o.driver}, client timeout 30 s`)

    const servers = []
    for (const key of o.servers) {
      const s = key === 'service' ? await startService(work, o.profileDir, [warm, ...phases].map((p) => p.siteId), o.log) : await startBaseline(key, work, o.profileDir)
      running.push(s)
      servers.push(s)
    }
    const load = (server, phase, label, extra = {}) => runLoad({
      driver: o.driver, url: `${server.base}${phase.path}`, method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', ...(phase.eventsPerRequest > 1 && server.token ? { authorization: `Bearer ${server.token}` } : {}) },
      stream: { templatesFile: phase.templatesFile, eventsPerSession: phase.eventsPerSession, openSessions: o.openSessions, sites: 1, eventsPerRequest: phase.eventsPerRequest },
      connections: phase.connections, seconds: o.seconds, label, workDir: work, ...extra,
    })
    for (const s of servers) await load(s, warm, `${s.label} warm-up`, { seconds: o.warmupSeconds, quiet: true })

    for (const [i, phase] of phases.entries()) {
      log(`phase ${phase.name}`)
      phase.runs = {}
      // a different server first in each phase, so that the machine's drift does not always favour one
      const order = servers.map((_, k) => servers[(k + i) % servers.length])
      for (const s of order) phase.runs[s.key] = await measure(s, phase, load)
    }
    const service = servers.find((s) => s.key === 'service')
    if (service) {
      await waitFolded(service.base)
      for (const phase of phases) phase.verification = await verifyPhase(service, phase, GOALS)
      service.cleanStop = await stopService(service.child)
    }
    for (const s of servers) await stop(s.child)
    return {
      setup: {
        driver: o.driver, log: o.log, seconds: o.seconds, warmupSeconds: o.warmupSeconds, openSessions: o.openSessions, mix: o.mix,
        goals: GOALS.map((g) => g.body), dataDirFs: service?.dataDirFs, servers: o.servers.map((k) => SERVERS[k].label),
      },
      phases: phases.map(({ stream: _stream, templatesFile: _templatesFile, ...p }) => ({ ...p, ratios: ratiosOf(p.runs) })),
      cleanStop: service?.cleanStop,
    }
  } catch (err) {
    const svc = running.find((s) => s.key === 'service')
    if (svc) {
      const { exitCode, signalCode } = svc.child
      const state = exitCode === null && signalCode === null ? 'still running' : `exited (${exitCode ?? signalCode})`
      err.message += `\n--- service ${state}; its output ---\n${svc.child.output.slice(-4000)}`
    }
    throw err
  } finally {
    for (const s of running) await stop(s.child)
    await rm(work, { recursive: true, force: true })
  }
}

function planPhases(o) {
  const phases = []
  for (const shape of o.shapes) {
    const eventsPerSession = shape === 'fresh' ? 1 : o.eventsPerSession
    for (const c of o.connections) {
      phases.push({ name: `${shape}, ${c} connections`, shape, siteId: `${shape}-c${c}`, eventsPerSession, eventsPerRequest: 1, connections: c, path: '/api/event' })
    }
  }
  if (o.batchSize > 0) {
    phases.push({
      name: `batches of ${o.batchSize}, ${o.batchConnections} connections`, shape: 'batch', siteId: `batch-${o.batchSize}`,
      eventsPerSession: o.eventsPerSession, eventsPerRequest: o.batchSize, connections: o.batchConnections, path: '/api/events',
    })
  }
  return phases
}

/** goalpost / durable min, durable min / bare and floor / durable min, by throughput and by throughput per server CPU second */
function ratiosOf(runs) {
  const r = (a, b, f) => (runs[a] && runs[b] ? ratio(f(runs[a]), f(runs[b])) : NaN)
  const rate = (x) => x.eventsPerSec
  const perCore = (x) => x.eventsPerCoreSecond
  return {
    serviceToDurable: r('service', 'durable', rate),
    serviceToDurablePerCore: r('service', 'durable', perCore),
    durableToBare: r('durable', 'bare', rate),
    durableToBarePerCore: r('durable', 'bare', perCore),
    serviceToBare: r('service', 'bare', rate),
    floorToDurable: r('floor', 'durable', rate),
    floorToDurablePerCore: r('floor', 'durable', perCore),
    layerToBare: r('layer', 'bare', rate),
  }
}

/** One measured run of one server: throughput, latency, the server's CPU share and memory. */
async function measure(server, phase, load) {
  const label = `${server.label}, ${phase.name}`
  const isService = server.key === 'service'
  let acceptedBefore
  if (isService) {
    acceptedBefore = await settledMetric(server.base, ...ACCEPTED)
    // this scrape resets the event-loop delay histogram: the next one covers the run alone
    await metrics(server.base)
  }
  const memoryBefore = memoryOf(server.child.pid)
  const cpu0 = cpuSeconds(server.child.pid)
  const r = await load(server, phase, label)
  r.memoryBefore = memoryBefore
  r.label = server.label
  r.serverCpu = (cpuSeconds(server.child.pid) - cpu0) / r.seconds
  r.eventsPerSec = r.okPerSec * phase.eventsPerRequest
  // events per second of server CPU: on a shared machine, a server that could not get its whole
  // core still shows what each event cost it
  r.eventsPerCoreSecond = r.eventsPerSec / r.serverCpu
  r.memory = memoryOf(server.child.pid)
  if (isService) {
    const text = await metrics(server.base)
    r.loopDelayMs = { max: metricValue(text, LOOP_DELAY_MAX) * 1000, p99: metricValue(text, LOOP_DELAY_P99) * 1000 }
    r.lagAtEnd = metricValue(text, 'goalpost_stream_lag_records')
    // what the state holds at the end, for the capacity formula (docs/architecture.md, Capacity)
    r.state = Object.fromEntries(['hot_sessions', 'conversions', 'summaries_bytes', 'goals_bytes', 'counters_bytes', 'filter_bytes'].map((k) => [k, metricValue(text, `goalpost_state_${k}`)]))
    r.catchUpMs = await waitFolded(server.base)
    const after = await settledMetric(server.base, ...ACCEPTED)
    const slack = (phase.connections + r.non2xx + r.errors) * phase.eventsPerRequest
    const extra = after - acceptedBefore - r.ok * phase.eventsPerRequest
    r.counts = { client: r.ok * phase.eventsPerRequest, serverDelta: after - acceptedBefore, extra, slack, ok: extra >= 0 && extra <= slack }
  }
  if (r.state?.summaries_bytes > 0) {
    const st = r.state
    log(`  ${label}: state in memory at the end: summaries ${mib(st.summaries_bytes)} (${fmt(st.hot_sessions)} hot), goals ${mib(st.goals_bytes)} (${fmt(st.conversions)} conversions), counters ${mib(st.counters_bytes)}, filter ${mib(st.filter_bytes)}; RSS before the load ${mib(r.memoryBefore.rss)}`)
  }
  const delay = r.loopDelayMs ? `, loop delay max ${r.loopDelayMs.max.toFixed(0)} ms p99 ${r.loopDelayMs.p99.toFixed(0)} ms, fold lag ${r.lagAtEnd} (caught up in ${r.catchUpMs} ms)` : ''
  log(`  ${label}: ${fmt(r.eventsPerSec)} events/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, max ${r.latencyMs.max.toFixed(0)} ms, non-2xx ${r.non2xx}, socket errors ${r.errors}, server core ${pct(r.serverCpu)}, load core ${pct(r.loadCpu)}, RSS ${mib(r.memory.rss)}${delay}`)
  return r
}

/** A baseline server script of bench/, pinned to the server core. */
async function startBaseline(key, work, profileDir) {
  const port = await freePort()
  const env = { BARE_PORT: String(port), DURABLE_FILE: join(work, `${key}.log`) }
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, key)] : []
  const child = start([process.execPath, ...profile, join(ROOT, 'bench', SERVERS[key].script)], { core: SERVER_CORE, env })
  await waitForOutput(child, /listening (\d+)/)
  return { key, label: SERVERS[key].label, child, base: `http://127.0.0.1:${port}` }
}

/** `node dist/main.js` on a fresh data directory, with one site (and the bench's goals) per phase. */
async function startService(work, profileDir, siteIds, logMode = 'embedded') {
  const port = await freePort()
  const dataDir = join(work, 'data')
  const token = `bench-${randomBytes(12).toString('hex')}`
  const env = {
    GOALPOST_HOST: '127.0.0.1', GOALPOST_PORT: String(port), GOALPOST_DATA_DIR: dataDir,
    GOALPOST_ADMIN_TOKEN: token, GOALPOST_LOG_LEVEL: 'warn',
    // Kafka mode: the broker of GOALPOST_KAFKA_BROKERS, topics of their own for this run
    ...(logMode === 'kafka' ? { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_PREFIX: `bench-${randomBytes(4).toString('hex')}` } : {}),
  }
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
  const child = start([process.execPath, ...profile, join(ROOT, 'dist', 'main.js')], { core: SERVER_CORE, env, cwd: ROOT })
  const base = `http://127.0.0.1:${port}`
  try {
    await waitReady(base, child)
    await setUpSites(new URL(base), token, siteIds, GOALS)
  } catch (err) {
    await stop(child)
    throw new Error(`${err.message}\n--- service output ---\n${child.output.slice(-3000)}`, { cause: err })
  }
  const dataDirFs = spawnSync('df', ['--output=fstype', dataDir], { encoding: 'utf8' }).stdout.trim().split('\n').pop()
  return { key: 'service', label: logMode === 'kafka' ? 'goalpost (kafka)' : SERVERS.service.label, child, base, token, dataDirFs }
}

async function waitReady(base, child) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`)
    // not listening yet refuses the connection: that is what this loop waits out
    const res = await fetch(`${base}/readyz`).catch(() => null)
    await res?.arrayBuffer()
    if (res?.status === 200) return
    await sleep(100)
  }
  throw new Error('service not ready within 30 s')
}

/** SIGTERM; a clean exit (code 0) means the final snapshot was written. */
async function stopService(child) {
  child.kill('SIGTERM')
  const { code, signal } = await child.exited
  return code === 0 && signal === null
}

const fmt = (n) => Math.round(n).toLocaleString('en-US')
const pct = (x) => (Number.isFinite(x) ? `${Math.round(x * 100)} %` : 'n/a')
const mib = (n) => (Number.isFinite(n) ? `${(n / 1048576).toFixed(0)} MiB` : 'n/a')
