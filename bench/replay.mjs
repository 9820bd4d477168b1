/**
 * `goalpost replay` against reading the same log without folding, in one run, on the embedded log
 * (the default) or on one Kafka broker. The events topic is filled the service's way — the admin
 * API creates a site and its goals, then the log's own append writes the CLI's synthetic stream
 * from 64 concurrent senders, one event per append (on Kafka, group commits make many small
 * transactions: record batches plus commit markers) — and then each case (bench/replay-child.mjs)
 * reads all of it in a process of its own, pinned to one core, the cases taking turns for
 * `--rounds` rounds. Reported: records/s, records per CPU second and CPU µs per record, and each
 * case's share of the plain read's rate in the same round (and of kafkajs' own consumer's, on
 * Kafka); medians over rounds.
 *
 *   node bench/replay.mjs [--events 500000] [--rounds 3] [--cases read,read-decode,read-fold,replay] [--profile]
 *   node bench/replay.mjs --log kafka [--cases raw,raw-decode,read,read-decode,read-fold,replay]
 *   node bench/replay.mjs --before <checkout>   # also read@before, replay@before: <checkout>/dist
 *   node bench/replay.mjs --reuse <data dir | topic prefix> --events <n>   # what an earlier run filled
 *
 * On Kafka it uses GOALPOST_KAFKA_BROKERS, else starts a private broker (Java, Maven). `--profile`
 * also runs every case but the raw ones once under `node --cpu-prof` and prints their hottest
 * functions.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { BENCH_GOALS, DEFAULT_MIX, SyntheticStream, parseMix, setUpSites } from '../dist/cli/index.js'
import { loggedRecordEncoder } from '../dist/cli/kafka-record.js'
import { loadConfig } from '../dist/config/index.js'
import { openLog } from '../dist/log/index.js'
import { machine, revision } from './lib/machine.mjs'
import { LOAD_CORE, SERVER_CORE, canPin, freePort, log, start, stop, waitForOutput } from './lib/proc.mjs'
import { int, table } from './lib/table.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values: o } = parseArgs({
  options: {
    events: { type: 'string', default: '500000' },
    rounds: { type: 'string', default: '3' },
    log: { type: 'string', default: 'embedded' },
    cases: { type: 'string' },
    before: { type: 'string' },
    partitions: { type: 'string', default: '4' },
    'events-per-session': { type: 'string', default: '6' },
    senders: { type: 'string', default: '64' },
    reuse: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
})
const EVENTS = Number(o.events)
const ROUNDS = Number(o.rounds)
const KAFKA = o.log === 'kafka'
if (!KAFKA && o.log !== 'embedded') throw new Error('--log is embedded or kafka')
const CASES = [...(o.cases ?? (KAFKA ? 'raw,raw-decode,read,read-decode,read-fold,replay' : 'read,read-decode,read-fold,replay')).split(','), ...(o.before ? ['read@before', 'replay@before'] : [])]
const PARTITIONS = Number(o.partitions)
const SITE = 'replay-bench'
const GOALS = BENCH_GOALS.slice(0, 3)

async function broker() {
  if (!KAFKA) return { stop: async () => undefined }
  if (process.env.GOALPOST_KAFKA_BROKERS) return { brokers: process.env.GOALPOST_KAFKA_BROKERS, stop: async () => undefined }
  process.env.TS_NODE_TRANSPILE_ONLY ??= '1' // the harness is TypeScript: load it, skip type checks
  await import('@tapjs/typescript/import')
  const { startKafkaBroker } = await import('../test/helpers/kafka-broker.ts')
  const b = await startKafkaBroker()
  // the broker on the other core: the case measured has its core to itself
  if (canPin()) spawnSync('taskset', ['-a', '-p', '-c', String(LOAD_CORE), String(b.pid)], { stdio: 'ignore' })
  return b
}

/**
 * The service creates the topics, the site and its goals through its own API, then stops. Its data
 * directory is the log replayed on the embedded log; on Kafka it is thrown away.
 */
async function setUp(env) {
  const port = await freePort()
  const dataDir = env.GOALPOST_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gp-replay-bench-'))
  const token = `bench-${randomBytes(12).toString('hex')}`
  const child = start([process.execPath, join(ROOT, 'dist', 'main.js')], {
    cwd: ROOT,
    env: { ...env, GOALPOST_HOST: '127.0.0.1', GOALPOST_PORT: String(port), GOALPOST_DATA_DIR: dataDir, GOALPOST_ADMIN_TOKEN: token, GOALPOST_LOG_LEVEL: 'warn' },
  })
  try {
    const base = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 120_000
    for (;;) {
      if ((await fetch(`${base}/readyz`).then((r) => r.status, () => 0)) === 200) break
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not get ready\n${child.output.slice(-3000)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    await setUpSites(new URL(base), token, [SITE], GOALS)
  } finally {
    await stop(child)
    if (!env.GOALPOST_DATA_DIR) rmSync(dataDir, { recursive: true, force: true })
  }
}

/** EVENTS events through the log's append, `senders` appends in flight, one event each. */
async function fill(env, run) {
  const logs = await openLog(loadConfig(env), { self: `replay-bench-filler-${process.pid}` })
  const stream = new SyntheticStream({
    siteIds: [SITE], goals: GOALS, mix: parseMix(DEFAULT_MIX), eventsPerSession: Number(o['events-per-session']), openSessions: 10_000, run: run.slice(-8),
  })
  const encode = await loggedRecordEncoder([SITE], 90)
  let next = 0
  let done = 0
  const started = performance.now()
  const ticker = setInterval(() => log(`  fill: ${int(done)}/${int(EVENTS)} events`), 2000)
  const sender = async () => {
    while (next < EVENTS) {
      const r = encode(stream.body(next++))
      await logs.log.append(logs.events, [{ key: r.key, value: Buffer.from(r.value), timestamp: Number(r.timestamp) }])
      done++
    }
  }
  try {
    await Promise.all(Array.from({ length: Number(o.senders) }, sender))
  } finally {
    clearInterval(ticker)
    await logs.close()
  }
  return EVENTS / ((performance.now() - started) / 1000)
}

/** One case in its own process on the measured core; resolves with its JSON line. */
async function runCase(name, env, nodeFlags = []) {
  // `case@before` runs the case on the build in --before
  const [which, variant] = name.split('@')
  const out = which === 'replay' ? mkdtempSync(join(tmpdir(), 'gp-replay-out-')) : undefined
  const child = start([process.execPath, ...nodeFlags, join(ROOT, 'bench', 'replay-child.mjs'), which], {
    core: SERVER_CORE,
    cwd: ROOT,
    env: { ...env, BENCH_EXPECT: String(EVENTS), ...(out ? { BENCH_OUT: out } : {}), ...(variant === 'before' ? { BENCH_DIST: join(resolve(o.before), 'dist') } : {}) },
  })
  try {
    const [line] = await waitForOutput(child, /^\{"case":.*\}$/m, 30 * 60_000)
    const { code } = await child.exited
    if (code !== 0) throw new Error(`${name} exited ${code}\n${child.output.slice(-3000)}`)
    return JSON.parse(line)
  } catch (err) {
    await stop(child)
    throw err
  } finally {
    if (out) rmSync(out, { recursive: true, force: true })
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const b = await broker()
  const prefix = KAFKA ? o.reuse ?? `replay-bench-${Date.now().toString(36)}` : undefined
  const dataDir = KAFKA ? undefined : o.reuse ?? mkdtempSync(join(tmpdir(), 'gp-replay-log-'))
  const env = {
    GOALPOST_PARTITIONS: String(PARTITIONS),
    ...(KAFKA
      ? { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: b.brokers, GOALPOST_KAFKA_PREFIX: prefix }
      : { GOALPOST_LOG: 'embedded', GOALPOST_DATA_DIR: dataDir }),
  }
  const where = prefix ? `${prefix}.events` : dataDir
  const result = { machine: machine(), revision: revision(ROOT), log: o.log, events: EVENTS, partitions: PARTITIONS, where, rounds: [] }
  try {
    if (!o.reuse) {
      log(`setting up ${where}: a site and ${GOALS.length} goals through the service's API`)
      await setUp(env)
      log(`filling ${where} with ${int(EVENTS)} events (${o.senders} senders, one event per append)`)
      result.fillEventsPerSecond = Math.round(await fill(env, prefix ?? dataDir))
      log(`  filled at ${int(result.fillEventsPerSecond)} events/s`)
    }
    for (let round = 0; round < ROUNDS; round++) {
      // a different case goes first each round: the machine's drift does not favour one
      const order = CASES.map((_, i) => CASES[(i + round) % CASES.length])
      const rows = {}
      for (const name of order) {
        const r = await runCase(name, env)
        rows[name] = r
        log(`round ${round + 1} ${name}: ${int(r.records / (r.ms / 1000))} records/s (${int(r.ms)} ms, ${int(r.cpuMs)} ms CPU, ${int(r.wallMs)} ms in all)`)
      }
      result.rounds.push(rows)
    }
    const summary = CASES.map((name) => {
      const runs = result.rounds.map((r) => r[name])
      const perSec = median(runs.map((r) => r.records / (r.ms / 1000)))
      const perCpuSec = median(runs.map((r) => r.records / (r.cpuMs / 1000)))
      const share = (base) => (CASES.includes(base) ? median(result.rounds.map((r) => (r[name].records / r[name].ms) / (r[base].records / r[base].ms))) : NaN)
      return { name, perSec, perCpuSec, ofRead: share('read'), ofRaw: share('raw'), perRound: runs.map((r) => Math.round(r.records / (r.ms / 1000))) }
    })
    result.summary = summary
    const ratio = (x) => (Number.isFinite(x) ? x.toFixed(2) : '')
    log('')
    log(table([
      ['case', 'records/s (median)', 'per CPU second', 'CPU µs per record', 'of read', ...(KAFKA ? ['of raw kafkajs'] : []), 'per round'],
      ...summary.map((s) => [
        s.name, int(s.perSec), int(s.perCpuSec), (1e6 / s.perCpuSec).toFixed(2), ratio(s.ofRead), ...(KAFKA ? [ratio(s.ofRaw)] : []), s.perRound.map(int).join(' / '),
      ]),
    ]))
    if (o.profile) {
      const dir = join(ROOT, 'bench', 'out', 'profiles', `replay-${o.log}-${Date.now()}`)
      mkdirSync(dir, { recursive: true })
      for (const name of CASES.filter((c) => !c.startsWith('raw'))) {
        const sub = join(dir, name.replace('@', '-'))
        await runCase(name, env, ['--cpu-prof', '--cpu-prof-dir', sub])
        const file = join(sub, readdirSync(sub).find((f) => f.endsWith('.cpuprofile')))
        log(`\n${name}: ${file}`)
        log(spawnSync(process.execPath, [join(ROOT, 'bench', 'profile-top.mjs'), file, '15'], { encoding: 'utf8' }).stdout)
      }
    }
  } finally {
    await b.stop()
  }
  mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true })
  const file = join(ROOT, 'bench', 'out', `replay-${o.log}-${new Date().toISOString().replaceAll(':', '-')}.json`)
  writeFileSync(file, JSON.stringify(result, null, 2))
  log(`\n${file}`)
  if (!KAFKA) log(`to read the same log again: --reuse ${dataDir} --events ${EVENTS}`)
  else if (process.env.GOALPOST_KAFKA_BROKERS) log(`to read the same topic again: --log kafka --reuse ${prefix} --events ${EVENTS}`)
}

main().then(() => process.exit(0), (err) => {
  console.error(err)
  process.exit(1)
})
