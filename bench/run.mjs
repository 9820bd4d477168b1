#!/usr/bin/env node
/**
 * Goalpost benchmarks. Run after `npm run build` (they import dist/ and start dist/main.js):
 *
 *   node bench/run.mjs ingest|query|memory|retention|all [--option value ...]
 *
 * Every figure that depends on the machine is reported beside a baseline measured in the same
 * run (a shared 2-core machine drifts by tens of percent between minutes). Prints tables and
 * writes the full result as JSON under bench/out/. See bench/README.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { benchIngest } from './ingest.mjs'
import { benchQuery } from './query.mjs'
import { benchMemory } from './memory.mjs'
import { benchRetention } from './retention.mjs'
import { reportIngest, reportMemory, reportQuery, reportRetention } from './report.mjs'
import { defaultDriver } from './lib/load.mjs'
import { machine, revision } from './lib/machine.mjs'
import { log } from './lib/proc.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const COMMANDS = ['ingest', 'query', 'memory', 'retention', 'all']

const OPTIONS = {
  seconds: { type: 'string', default: '20', help: 'ingest: seconds per server and phase' },
  warmup: { type: 'string', default: '2', help: 'ingest: warm-up seconds per server' },
  connections: { type: 'string', default: '64,256', help: 'ingest: connection counts for POST /api/event, comma-separated' },
  shapes: { type: 'string', default: 'fresh,mix', help: 'ingest: fresh (a new session per request), mix (--events-per-session per session)' },
  'events-per-session': { type: 'string', default: '6', help: 'ingest: events per session in the mix shape and the batches' },
  'open-sessions': { type: 'string', default: '10000', help: 'ingest: sessions under way at a time (multiple of 100)' },
  mix: { type: 'string', default: 'pageview=70,custom_event=10,pageleave=8,web_vitals=5,button_click=4,external_link=3', help: 'ingest: event types and weights' },
  'batch-size': { type: 'string', default: '100', help: 'ingest: events per POST /api/events (100, or 0 for no batch phase)' },
  'batch-connections': { type: 'string', default: '16', help: 'ingest: connections for batches' },
  servers: { type: 'string', default: 'bare,durable,service', help: 'ingest: servers side by side, of bare, durable, floor (the durable minimum plus what every event must go through), layer (the service\'s HTTP layer alone), service' },
  driver: { type: 'string', default: '', help: 'wrk (the ingest bench needs it) | autocannon' },
  log: { type: 'string', default: 'embedded', help: 'ingest: the service\'s log, embedded or kafka (kafka needs GOALPOST_KAFKA_BROKERS)' },
  scales: { type: 'string', default: '30000,100000,1000000', help: 'query: sessions per day, comma-separated, ascending' },
  goals: { type: 'string', default: '50', help: 'query: goals of the site' },
  days: { type: 'string', default: '30', help: 'query: days of state and of the window' },
  partitions: { type: 'string', default: '4', help: 'query/memory: partitions of state' },
  'multi-day': { type: 'string', default: '0.02', help: 'query/memory: share of sessions converting on two days' },
  'query-seconds': { type: 'string', default: '5', help: 'query: seconds per HTTP load run' },
  'memory-sizes': { type: 'string', default: '1000000,5000000', help: 'memory: converted sessions, comma-separated' },
  'retention-days': { type: 'string', default: '3,10,30', help: 'retention: retained days, comma-separated (each ≥ 3: the questions ask days before yesterday)' },
  'sessions-per-day': { type: 'string', default: '100000', help: 'retention: sessions a day, 2–3 events each' },
  profile: { type: 'boolean', default: false, help: 'ingest: run the service and the baselines under --cpu-prof (bench/out/profiles, a folder each)' },
  quick: { type: 'boolean', default: false, help: 'a smoke run: small sizes, runs of a few seconds' },
  help: { type: 'boolean', default: false, help: 'this text' },
}

function usage() {
  const lines = Object.entries(OPTIONS).map(([k, v]) => `  --${k.padEnd(18)} ${v.help}${v.default !== '' && v.type === 'string' ? ` (${v.default})` : ''}`)
  return `usage: node bench/run.mjs ${COMMANDS.join('|')} [options]\n${lines.join('\n')}`
}

function settings(values) {
  const num = (k) => {
    const n = Number(values[k])
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${k} must be a number, got ${values[k]}`)
    return n
  }
  const list = (k) => values[k].split(',').map((s) => Number(s.trim())).filter((n) => n > 0)
  const oneOf = (k, allowed) => {
    const got = values[k].split(',').map((s) => s.trim()).filter(Boolean)
    const bad = got.find((x) => !allowed.includes(x))
    if (bad || got.length === 0) throw new Error(`--${k} takes ${allowed.join(', ')} (comma-separated), got ${values[k]}`)
    return got
  }
  const batchSize = () => {
    const n = num('batch-size')
    // wrk-sequence.lua builds a batch from the 100 sessions of one block
    if (n !== 0 && n !== 100) throw new Error(`--batch-size must be 100 or 0, got ${values['batch-size']}`)
    return n
  }
  const quick = values.quick
  const driver = values.driver || defaultDriver()
  if (driver !== 'wrk' && driver !== 'autocannon') throw new Error(`--driver must be wrk or autocannon, got ${driver}`)
  return {
    ingest: {
      seconds: quick ? 3 : num('seconds'),
      warmupSeconds: quick ? 1 : num('warmup'),
      connections: quick ? list('connections').slice(0, 1) : list('connections'),
      shapes: oneOf('shapes', ['fresh', 'mix']),
      eventsPerSession: num('events-per-session'),
      openSessions: num('open-sessions'),
      mix: values.mix,
      batchSize: batchSize(),
      batchConnections: num('batch-connections'),
      servers: oneOf('servers', ['bare', 'durable', 'floor', 'layer', 'service']),
      driver,
      log: logMode(values.log),
      profileDir: values.profile ? join(HERE, 'out', 'profiles') : undefined,
    },
    query: {
      scales: quick ? [10_000, 50_000] : list('scales').sort((a, b) => a - b),
      goals: num('goals'),
      days: num('days'),
      partitions: num('partitions'),
      multiDayShare: num('multi-day'),
      seconds: quick ? 2 : num('query-seconds'),
      // autocannon's latencies against uWS are not per request (at one connection, ~10k answers a
      // second came with a median of 400 ms): wrk's when it is installed
      driver,
    },
    memory: {
      sizes: quick ? [100_000, 300_000] : list('memory-sizes'),
      partitions: num('partitions'),
      multiDayShare: num('multi-day'),
    },
    retention: {
      days: quick ? [3, 6] : retentionDays(list('retention-days')),
      sessionsPerDay: quick ? 10_000 : num('sessions-per-day'),
    },
  }
}

function retentionDays(days) {
  const sorted = [...new Set(days.map(Math.floor))].sort((a, b) => a - b)
  if (sorted.length === 0 || sorted[0] < 3) throw new Error(`--retention-days takes counts of days of at least 3, got ${sorted.join(',')}`)
  return sorted
}

function logMode(log) {
  if (log !== 'embedded' && log !== 'kafka') throw new Error(`--log must be embedded or kafka, got ${log}`)
  if (log === 'kafka' && !process.env.GOALPOST_KAFKA_BROKERS) throw new Error('--log kafka needs GOALPOST_KAFKA_BROKERS (host:port of a broker)')
  return log
}

async function main() {
  const { values, positionals } = parseArgs({
    options: Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [k, { type: v.type, default: v.default }])),
    allowPositionals: true,
  })
  const command = positionals[0] ?? 'all'
  if (values.help || !COMMANDS.includes(command) || positionals.length > 1) {
    log(usage())
    process.exitCode = values.help ? 0 : 2
    return
  }
  let s
  try {
    s = settings(values)
  } catch (err) {
    log(`${err.message}\n${usage()}`)
    process.exitCode = 2
    return
  }
  const started = new Date()
  const result = {
    command: `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    startedAt: started.toISOString(),
    machine: machine(),
    source: revision(join(HERE, '..')),
  }
  log(`goalpost bench ${command} at ${result.source.commit ?? 'unknown commit'}${result.source.srcDirty ? ' (src modified)' : ''} — ${result.machine.nproc} cores (${result.machine.cpuModel}), node ${result.machine.node}, load average ${result.machine.loadAverage.map((x) => x.toFixed(2)).join(' ')}${result.machine.pinned ? ', server on core 0, load on core 1' : ', unpinned'}`)

  const reports = []
  if (command === 'ingest' || command === 'all') {
    result.ingest = await benchIngest(s.ingest)
    reports.push(reportIngest(result.ingest))
  }
  if (command === 'query' || command === 'all') {
    result.query = await benchQuery(s.query)
    reports.push(reportQuery(result.query))
  }
  if (command === 'memory' || command === 'all') {
    result.memory = await benchMemory(s.memory)
    reports.push(reportMemory(result.memory))
  }
  // not part of `all`: it folds millions of events through the log (minutes)
  if (command === 'retention') {
    result.retention = await benchRetention(s.retention)
    reports.push(reportRetention(result.retention))
  }
  result.finishedAt = new Date().toISOString()
  result.loadAverageAtEnd = machine().loadAverage

  const outDir = join(HERE, 'out')
  mkdirSync(outDir, { recursive: true })
  const file = join(outDir, `${command}-${started.toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n')
  log('\n' + reports.join('\n\n'))
  log(`\n${Math.round((Date.now() - started.getTime()) / 1000)} s; full result in ${relative(process.cwd(), file)}`)
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err.stack ?? err}\n`)
  process.exitCode = 1
})
