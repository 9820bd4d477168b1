/**
 * Kafka mode, end to end on one machine: freshness (202 → counted, asked of the other node),
 * takeover (a node killed with N events retained → the survivor answers whole again) and replay
 * (`goalpost replay` over the same topic). Needs a broker: GOALPOST_KAFKA_BROKERS=host:port.
 *   node bench/kafka-cluster.mjs [events=1000000] [freshness samples=200]
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { KafkaLog } from '../dist/log/index.js'

const EVENTS = Number(process.argv[2] ?? 1_000_000)
const SAMPLES = Number(process.argv[3] ?? 200)
const brokers = process.env.GOALPOST_KAFKA_BROKERS
if (!brokers) throw new Error('set GOALPOST_KAFKA_BROKERS to a broker')
const prefix = `bench-${Date.now().toString(36)}`
const token = `admin-${prefix}`
const PARTITIONS = 4
const base = { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: brokers, GOALPOST_KAFKA_PREFIX: prefix, GOALPOST_PARTITIONS: String(PARTITIONS), GOALPOST_ADMIN_TOKEN: token, GOALPOST_KAFKA_SESSION_TIMEOUT_MS: '10000', GOALPOST_LOG_LEVEL: 'warn', GOALPOST_HOST: '127.0.0.1' }
const dirs = []
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const pct = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]

const freePort = () => new Promise((resolve) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })

async function node() {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'gp-bench-'))
  dirs.push(dataDir)
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ['dist/main.js'], { env: { ...process.env, ...base, GOALPOST_PORT: String(port), GOALPOST_DATA_DIR: dataDir, GOALPOST_ADVERTISE_URL: url }, stdio: 'ignore' })
  return { url, child }
}
async function api(n, method, path, body) {
  const res = await fetch(n.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) })
  return { status: res.status, json: await res.json().catch(() => null) }
}
async function until(what, fn, ms) {
  const start = Date.now()
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return Date.now() - start
    if (Date.now() - start > ms) throw new Error(`timed out: ${what}`)
    await sleep(100)
  }
}
const ready = (n) => fetch(n.url + '/readyz').then((r) => r.status === 200)

const a = await node()
await until('node a ready', () => ready(a), 60_000)
const site = 'shop'
await api(a, 'POST', '/api/sites', { site_id: site })
await api(a, 'POST', '/api/goals', { site_id: site, goal_type: 'pageview', match_path: '/buy/**' })

// the retained history: EVENTS events of EVENTS/5 sessions, written through the service's own log adapter
const log = await KafkaLog.open({ brokers: brokers.split(','), nodeId: `${prefix}-filler`, clientId: prefix })
const topic = `${prefix}.events`
await log.createTopic({ name: topic, partitions: PARTITIONS })
const now = Date.now()
const fillStart = performance.now()
let converted = 0
for (let i = 0; i < EVENTS; i += 5000) {
  const records = []
  for (let j = i; j < Math.min(EVENTS, i + 5000); j++) {
    const s = `s${Math.floor(j / 5)}`
    const buy = j % 5 === 4 && Math.floor(j / 5) % 4 === 0
    if (buy) converted++
    const ts = now - (j % 3_600_000)
    const e = { type: 'pageview', site_id: site, session_id: s, path: buy ? '/buy/x' : '/', ts, received_at: ts }
    records.push({ key: `${site}\u0000${s}`, value: Buffer.from(JSON.stringify(e)), timestamp: ts })
  }
  await log.append(topic, records)
}
const fillSeconds = (performance.now() - fillStart) / 1000
await log.close()
const sessions = Math.ceil(EVENTS / 5)
const whole = async (n) => {
  const r = await api(n, 'GET', `/api/goals?site_id=${site}&days=1`)
  return r.status === 200 && r.json.goals[0].conversions === converted ? r.json : undefined
}
const foldMs = await until('history folded', () => whole(a), 600_000)

const b = await node()
await until('node b ready', () => ready(b), 120_000)
await until('both answer', async () => (await whole(a)) && (await whole(b)), 120_000)

// freshness: an event acknowledged by one node, counted in the other node's answer
const fresh = []
const refusals = []
let expected = converted
for (let i = 0; i < SAMPLES; i++) {
  const [via, ask] = i % 2 ? [a, b] : [b, a]
  const t0 = performance.now()
  // a 503 asks to retry (docs/api.md §1): the sample then counts from the first attempt, retries included
  let res
  for (;;) {
    res = await fetch(via.url + '/api/event', { method: 'POST', body: JSON.stringify({ type: 'pageview', site_id: site, session_id: `fresh-${prefix}-${i}`, path: '/buy/now' }) })
    if (res.status !== 503) break
    refusals.push(`${res.status} ${await res.text()}`)
    await sleep(1000 * Number(res.headers.get('retry-after') ?? 1))
  }
  if (res.status !== 202) throw new Error(`event answered ${res.status}: ${await res.text()}`)
  expected++
  for (;;) {
    const r = await api(ask, 'GET', `/api/goals?site_id=${site}&days=1`)
    if (r.status === 200 && r.json.goals[0].conversions >= expected) break
    await sleep(5)
  }
  fresh.push(performance.now() - t0)
}
converted = expected

// takeover: kill b, time until a answers whole again
b.child.kill('SIGKILL')
const killedAt = Date.now()
await until('a whole again after the kill', async () => {
  const st = await api(a, 'GET', '/api/status')
  return st.status === 200 && st.json.partitions.length === PARTITIONS && st.json.partitions.every((p) => p.owner === a.url && p.lag === 0) && (await whole(a))
}, 300_000)
const takeoverMs = Date.now() - killedAt
a.child.kill('SIGTERM')
await sleep(2000)

// replay of the same topic into an empty directory
const out = mkdtempSync(join(tmpdir(), 'gp-replay-'))
dirs.push(out)
const replay = spawnSync(process.execPath, ['dist/cli/main.js', 'replay', '--out', out], { env: { ...process.env, ...base }, encoding: 'utf8' })
const rate = /: (\d+) events\/s/.exec(replay.stdout)?.[1]

const result = {
  events: EVENTS, sessions, partitions: PARTITIONS,
  fillEventsPerSecond: Math.round(EVENTS / fillSeconds),
  foldEventsPerSecond: Math.round(EVENTS / (foldMs / 1000)),
  freshnessRefusals: refusals,
  freshnessMs: { p50: +pct(fresh, 0.5).toFixed(1), p99: +pct(fresh, 0.99).toFixed(1), max: +Math.max(...fresh).toFixed(1) },
  takeoverMs,
  replayEventsPerSecond: rate ? Number(rate) : `failed: ${replay.stderr.slice(0, 300)}`,
}
console.log(JSON.stringify(result, null, 2))
for (const d of dirs) rmSync(d, { recursive: true, force: true })
process.exit(0)
