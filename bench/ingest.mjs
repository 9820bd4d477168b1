/**
 * Ingest throughput: POST /api/event on the real service against a bare uWS app doing only
 * read + JSON.parse + 202 (and, between the two, the service's own HTTP layer doing the same),
 * under the same load, in the same run; then POST /api/events with
 * 1000-event batches. The service runs as `node dist/main.js` with a fresh data directory on
 * disk (the embedded log fsyncs every group commit), pinned to the server core; the load comes
 * from wrk (or autocannon) pinned to the other core. Afterwards the service's own counters and
 * its GET /api/goals answer are checked against what was acknowledged.
 *
 * Order: rounds of bare, HTTP layer, service, then bare and HTTP layer once more — baseline samples
 * bracket every service run, so drift on a shared machine shows up as a spread instead of
 * silently skewing the ratio.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BENCH_GOALS, HOST, batchBodies, singleEventBodies } from './lib/events.mjs'
import { expectCall, metricValue, metrics, settledMetric, sleep, waitFolded } from './lib/http.mjs'
import { runLoad } from './lib/load.mjs'
import { SERVER_CORE, cpuSeconds, freePort, log, start, stop, waitForOutput } from './lib/proc.mjs'
import { ratio } from './lib/stats.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const SITE = 'bench-shop'
const BATCH_SITE = 'bench-import'
const BATCH_SIZE = 1000
const BATCH_BODIES = 8
const ACCEPTED = ['goalpost_ingest_events_total', { outcome: 'accepted' }]

/**
 * @param o { seconds, warmupSeconds, connections, rounds, batchSeconds, batchConnections, sessions,
 *            batchSessions, driver, profileDir? } — with profileDir the service runs under
 *            --cpu-prof and leaves its profile there (read it with bench/profile-top.mjs)
 */
export async function benchIngest(o) {
  const work = await mkdtemp(join(tmpdir(), 'goalpost-bench-'))
  let bare
  let layer
  let svc
  try {
    const singles = singleEventBodies(SITE, o.sessions)
    const batches = batchBodies(BATCH_SITE, o.batchSessions, BATCH_SIZE, BATCH_BODIES)
    const singleFile = join(work, 'single-bodies.txt')
    const batchFile = join(work, 'batch-bodies.txt')
    await writeFile(singleFile, singles.bodies.join('\n') + '\n')
    await writeFile(batchFile, batches.bodies.join('\n') + '\n')
    const meanBody = Math.round(singles.bodies.reduce((n, b) => n + Buffer.byteLength(b), 0) / singles.bodies.length)
    log(`ingest: ${singles.bodies.length} distinct bodies over ${o.sessions} sessions (mean ${meanBody} B), driver ${o.driver}, ${o.connections} connections, ${o.rounds} rounds of ${o.seconds} s`)

    const load = (target, label, extra) => runLoad({
      driver: o.driver, url: `${target.base}/api/event`, method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' },
      bodiesFile: singleFile, connections: o.connections, seconds: o.seconds, label, workDir: work, ...extra,
    })

    // All three servers stay up, pinned to the same core, and take turns under load: an idle one
    // costs nothing, and alternating runs spreads the machine's drift over every side of a ratio.
    bare = await startBaseline('bare-uws.mjs')
    layer = await startBaseline('http-layer.mjs')
    svc = await startService(work, o.profileDir)
    await load(bare, 'bare warm-up', { seconds: o.warmupSeconds, quiet: true })
    await load(layer, 'http layer warm-up', { seconds: o.warmupSeconds, quiet: true })
    await load(svc, 'service warm-up', { seconds: o.warmupSeconds, quiet: true })

    const bareRuns = []
    const layerRuns = []
    const serviceRuns = []
    for (let round = 1; round <= o.rounds + 1; round++) {
      bareRuns.push(await measureBaseline(bare, load, `bare uWS #${round}`))
      layerRuns.push(await measureBaseline(layer, load, `HTTP layer #${round}`))
      // the last round only closes the bracket around the last service run
      if (round <= o.rounds) serviceRuns.push(await measureSingles(svc, load, `service #${round}`, o.connections))
    }
    await stop(bare.child)
    await stop(layer.child)

    const singleCheck = await verifySingles(svc, singles.expected, serviceRuns)
    const batch = await measureBatches(svc, o, work, batchFile)
    const batchCheck = await verifyBatches(svc, batches.expected, batch)
    const cleanStop = await stopService(svc.child)

    const mean = (runs, f) => runs.reduce((n, r) => n + f(r), 0) / runs.length
    const bareOk = mean(bareRuns, (r) => r.okPerSec)
    const layerOk = mean(layerRuns, (r) => r.okPerSec)
    const serviceOk = mean(serviceRuns, (r) => r.okPerSec)
    const perCore = (runs) => mean(runs, (r) => r.okPerCoreSecond)
    // each service run against the mean of the two baseline runs around it
    const perRound = serviceRuns.map((r, i) => ratio(r.okPerSec, (bareRuns[i].okPerSec + bareRuns[i + 1].okPerSec) / 2))
    return {
      setup: {
        driver: o.driver, connections: o.connections, seconds: o.seconds, rounds: o.rounds, warmupSeconds: o.warmupSeconds,
        sessions: o.sessions, distinctBodies: singles.bodies.length, meanBodyBytes: meanBody,
        batchSize: BATCH_SIZE, batchConnections: o.batchConnections, batchSeconds: o.batchSeconds, batchSessions: o.batchSessions,
        batchBodyBytes: Math.round(batches.bodies.reduce((n, b) => n + Buffer.byteLength(b), 0) / batches.bodies.length),
        dataDirFs: svc.dataDirFs,
      },
      bare: bareRuns,
      httpLayer: layerRuns,
      service: serviceRuns,
      batch,
      verification: { single: singleCheck, batch: batchCheck, cleanStop },
      ratios: {
        serviceToBare: ratio(serviceOk, bareOk),
        perRound,
        perCoreSecond: ratio(perCore(serviceRuns), perCore(bareRuns)),
        httpLayerToBare: ratio(layerOk, bareOk),
        httpLayerPerCoreSecond: ratio(perCore(layerRuns), perCore(bareRuns)),
        serviceToHttpLayer: ratio(serviceOk, layerOk),
        serviceToHttpLayerPerCoreSecond: ratio(perCore(serviceRuns), perCore(layerRuns)),
        p50ServiceToBare: ratio(mean(serviceRuns, (r) => r.latencyMs.p50), mean(bareRuns, (r) => r.latencyMs.p50)),
        p99ServiceToBare: ratio(mean(serviceRuns, (r) => r.latencyMs.p99), mean(bareRuns, (r) => r.latencyMs.p99)),
      },
    }
  } catch (err) {
    if (svc) {
      const { exitCode, signalCode } = svc.child
      const state = exitCode === null && signalCode === null ? 'still running' : `exited (${exitCode ?? signalCode})`
      err.message += `\n--- service ${state}; its output ---\n${svc.child.output.slice(-4000)}`
    }
    throw err
  } finally {
    for (const target of [bare, layer, svc]) if (target) await stop(target.child)
    await rm(work, { recursive: true, force: true })
  }
}

/** Runs the load against `pid`'s server and adds the share of its core the server used. */
async function measured(pid, run) {
  const before = cpuSeconds(pid)
  const r = await run()
  r.serverCpu = (cpuSeconds(pid) - before) / r.seconds
  // requests per second of server CPU: on a shared machine a server that could not get its core
  // still shows what each request cost it
  r.okPerCoreSecond = r.okPerSec / r.serverCpu
  return r
}

/** A baseline server script of bench/, pinned to the server core. */
async function startBaseline(script) {
  const port = await freePort()
  const child = start([process.execPath, join(ROOT, 'bench', script)], { core: SERVER_CORE, env: { BARE_PORT: String(port) } })
  await waitForOutput(child, /listening (\d+)/)
  return { child, base: `http://127.0.0.1:${port}` }
}

async function measureBaseline(target, load, label) {
  const r = await measured(target.child.pid, () => load(target, label))
  r.label = label
  log(`  ${label}: ${fmt(r.okPerSec)} 202/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, server core ${pct(r.serverCpu)}, load core ${pct(r.loadCpu)}`)
  return r
}

/** `node dist/main.js` on a fresh data directory, with the bench's sites and goals created. */
async function startService(work, profileDir) {
  const port = await freePort()
  const dataDir = join(work, 'data')
  const token = `bench-${randomBytes(12).toString('hex')}`
  const env = {
    GOALPOST_HOST: '127.0.0.1', GOALPOST_PORT: String(port), GOALPOST_DATA_DIR: dataDir,
    GOALPOST_ADMIN_TOKEN: token, GOALPOST_LOG_LEVEL: 'warn',
  }
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
  const child = start([process.execPath, ...profile, join(ROOT, 'dist', 'main.js')], { core: SERVER_CORE, env, cwd: ROOT })
  const base = `http://127.0.0.1:${port}`
  const goalIds = []
  try {
    await waitReady(base, child)
    await expectCall(201, base, 'POST', '/api/sites', { token, body: { site_id: SITE, domain: HOST, timezone: 'Europe/Berlin' } })
    await expectCall(201, base, 'POST', '/api/sites', { token, body: { site_id: BATCH_SITE, timezone: 'UTC' } })
    for (const g of BENCH_GOALS) goalIds.push((await expectCall(201, base, 'POST', '/api/goals', { token, body: { site_id: SITE, ...g.body } })).id)
    await expectCall(201, base, 'POST', '/api/goals', { token, body: { site_id: BATCH_SITE, goal_type: 'pageview', match_path: '/pricing' } })
  } catch (err) {
    await stop(child)
    throw new Error(`${err.message}\n--- service output ---\n${child.output.slice(-3000)}`)
  }
  const dataDirFs = spawnSync('df', ['--output=fstype', dataDir], { encoding: 'utf8' }).stdout.trim().split('\n').pop()
  return { child, base, token, goalIds, dataDirFs }
}

async function measureSingles(svc, load, label, connections) {
  const before = await settledMetric(svc.base, ...ACCEPTED)
  const r = await measured(svc.child.pid, () => load(svc, label))
  r.label = label
  r.lagAtEnd = metricValue(await metrics(svc.base), 'goalpost_stream_lag_records')
  r.catchUpMs = await waitFolded(svc.base)
  const after = await settledMetric(svc.base, ...ACCEPTED)
  r.counts = countsAgree({ client: r.ok, serverDelta: after - before, slack: connections })
  log(`  ${label}: ${fmt(r.okPerSec)} 202/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, server core ${pct(r.serverCpu)}, load core ${pct(r.loadCpu)}, fold lag at end ${r.lagAtEnd} (caught up in ${r.catchUpMs} ms)`)
  return r
}

async function measureBatches(svc, o, work, batchFile) {
  const batchLoad = (label, extra) => runLoad({
    driver: o.driver, url: `${svc.base}/api/events`, method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.token}` },
    bodiesFile: batchFile, connections: o.batchConnections, seconds: o.batchSeconds, label, workDir: work, ...extra,
  })
  await batchLoad('batch warm-up', { seconds: o.warmupSeconds, quiet: true })
  const before = await settledMetric(svc.base, ...ACCEPTED)
  await waitFolded(svc.base)
  const b = await measured(svc.child.pid, () => batchLoad('service POST /api/events (1000/batch)'))
  b.eventsPerSec = (b.ok * BATCH_SIZE) / b.seconds
  b.lagAtEnd = metricValue(await metrics(svc.base), 'goalpost_stream_lag_records')
  b.catchUpMs = await waitFolded(svc.base)
  const after = await settledMetric(svc.base, ...ACCEPTED)
  // what the service can take in and also fold: acknowledged events over the time until state caught up
  b.foldedEventsPerSec = (b.ok * BATCH_SIZE) / (b.seconds + b.catchUpMs / 1000)
  b.counts = countsAgree({ client: b.ok * BATCH_SIZE, serverDelta: after - before, slack: o.batchConnections * BATCH_SIZE })
  log(`  batches: ${fmt(b.eventsPerSec)} events/s (${fmt(b.okPerSec)} batches/s), p50 ${b.latencyMs.p50.toFixed(1)} ms, p99 ${b.latencyMs.p99.toFixed(1)} ms, server core ${pct(b.serverCpu)}, fold lag at end ${b.lagAtEnd} (caught up in ${b.catchUpMs} ms)`)
  return b
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
async function stopService(svc) {
  svc.kill('SIGTERM')
  const { code, signal } = await svc.exited
  return code === 0 && signal === null
}

/**
 * The service may have acknowledged a few requests the client never saw answered (in flight when
 * the client stopped), never fewer than the client saw: 0 ≤ server − client ≤ connections.
 */
function countsAgree(c) {
  const extra = c.serverDelta - c.client
  return { ...c, extra, ok: extra >= 0 && extra <= c.slack }
}

/**
 * total_sessions is exact below the exact threshold and a HyperLogLog estimate above it: accept
 * the estimate within 3 standard errors (3 × 0.81 %), conversions must still be exact.
 */
const sessionsAgree = (got, expected) => Math.abs(got - expected) <= Math.max(0, Math.ceil(expected * 0.0244))

async function verifySingles(svc, expected, runs) {
  const list = await expectCall(200, svc.base, 'GET', `/api/goals?site_id=${SITE}&days=2`, { token: svc.token })
  const conversions = svc.goalIds.map((id) => list.goals.find((g) => g.id === id)?.conversions)
  const r = {
    acknowledged: runs.map((x) => x.counts),
    totalSessions: { expected: expected.sessions, got: list.total_sessions },
    conversions: { expected: expected.conversions, got: conversions },
  }
  r.ok = runs.every((x) => x.counts.ok) && sessionsAgree(list.total_sessions, expected.sessions) && conversions.every((c, i) => c === expected.conversions[i])
  const client = runs.reduce((n, x) => n + x.counts.client, 0)
  const server = runs.reduce((n, x) => n + x.counts.serverDelta, 0)
  log(`  check /api/event: acknowledged ${client}, service counted ${server} (${runs.map((x) => `+${x.counts.extra}`).join(' ')} in flight); total_sessions ${list.total_sessions}/${expected.sessions}; conversions ${conversions.join(',')}/${expected.conversions.join(',')} → ${r.ok ? 'OK' : 'MISMATCH'}`)
  return r
}

async function verifyBatches(svc, expected, batch) {
  const list = await expectCall(200, svc.base, 'GET', `/api/goals?site_id=${BATCH_SITE}&days=2`, { token: svc.token })
  const r = { acknowledged: batch.counts, totalSessions: { expected: expected.sessions, got: list.total_sessions } }
  r.ok = batch.counts.ok && sessionsAgree(list.total_sessions, expected.sessions)
  log(`  check /api/events: acknowledged ${batch.counts.client} events, service counted ${batch.counts.serverDelta} (+${batch.counts.extra} in flight); total_sessions ${list.total_sessions}/${expected.sessions} → ${r.ok ? 'OK' : 'MISMATCH'}`)
  return r
}

const fmt = (n) => Math.round(n).toLocaleString('en-US')
const pct = (x) => (Number.isFinite(x) ? `${Math.round(x * 100)} %` : 'n/a')
