/**
 * The embedded log's group commit against the durable minimum, in one run: many callers append
 * ~300-byte JSON records and await each append; the baseline does the least a durable append can
 * do (the records of all waiting appends written with one `write` + one `fdatasync` to a file in
 * the same directory). Each run is its own process pinned to one core (as the service is in the
 * ingest bench), and baseline and log take turns so the machine's drift hits both.
 *
 *   node bench/log-commit.mjs [--seconds 5] [--rounds 3] [--dir <parent dir>] [--cases …]
 *
 * Reported per case: appends/s and records/s of each side and their ratio, latency p50/p99,
 * records per commit, CPU per record (all threads) and where it went (main thread, libuv pool,
 * LevelDB's compaction thread, V8's helpers), and context switches per commit — each hand-off
 * between the main thread and another thread costs one or two.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { machine, revision } from './lib/machine.mjs'
import { canPin, log, nextMessage, SERVER_CORE, start, withTicker } from './lib/proc.mjs'
import { int, ms, table } from './lib/table.mjs'

const here = dirname(fileURLToPath(import.meta.url))

const CASES = {
  single64: { concurrency: 64, perAppend: 1 },
  single256: { concurrency: 256, perAppend: 1 },
  batch16: { concurrency: 16, perAppend: 100 },
  batch64: { concurrency: 64, perAppend: 100 },
}

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    partitions: { type: 'string', default: '4' },
    dir: { type: 'string', default: tmpdir() },
    cases: { type: 'string', default: Object.keys(CASES).join(',') },
    sides: { type: 'string', default: 'durable,log' },
    help: { type: 'boolean', default: false },
  },
})
if (opts.help) {
  log(`node bench/log-commit.mjs [--seconds 5] [--rounds 3] [--warmup 1] [--partitions 4] [--dir ${tmpdir()}]
    [--cases ${Object.keys(CASES).join(',')}] [--sides durable,log]
  --dir: where the runs write (a fresh directory inside it each run): put it on the disk under test
  --sides: durable (the baseline, always run), log, and variants of the baseline: dsync (one write
    to an O_DSYNC file, no separate fdatasync), prealloc (O_DSYNC writes into a file written and
    synced beforehand, so no sync needs a journal commit)`)
  process.exit(0)
}
const seconds = Number(opts.seconds)
const rounds = Number(opts.rounds)
const SIDES = ['durable', 'log', 'dsync', 'prealloc']
const sides = ['durable', ...opts.sides.split(',').filter((side) => side !== 'durable')]
for (const side of sides) if (!SIDES.includes(side)) throw new Error(`--sides: unknown side ${side}; known: ${SIDES.join(', ')}`)
const cases = opts.cases.split(',').map((name) => {
  if (!CASES[name]) throw new Error(`--cases: unknown case ${name}; known: ${Object.keys(CASES).join(', ')}`)
  return { name, ...CASES[name] }
})

async function runOnce(target, c) {
  const dir = await mkdtemp(join(opts.dir, 'goalpost-log-commit-'))
  try {
    const spec = {
      target,
      concurrency: c.concurrency,
      perAppend: c.perAppend,
      seconds,
      warmupSeconds: Number(opts.warmup),
      partitions: Number(opts.partitions),
      dir,
    }
    const child = start([process.execPath, join(here, 'log-commit-child.mjs')], {
      core: SERVER_CORE,
      ipc: true,
      env: { LOG_COMMIT_CASE: JSON.stringify(spec) },
    })
    const { result } = await withTicker(`${c.name} ${target}`, seconds + spec.warmupSeconds, nextMessage(child, 'result', (seconds + 120) * 1000))
    await child.exited
    return result
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Sums of the runs of one side of one case. */
function total(runs) {
  const sum = (f) => runs.reduce((a, r) => a + f(r), 0)
  const records = sum((r) => r.records)
  const commits = sum((r) => r.commits)
  const elapsed = sum((r) => r.elapsed)
  const thread = (kind, what) => sum((r) => r.threads[kind][what])
  const switches = ['main', 'pool', 'leveldb', 'v8'].reduce((a, kind) => a + thread(kind, 'switches'), 0)
  return {
    appendsPerSec: sum((r) => r.appends) / elapsed,
    recordsPerSec: records / elapsed,
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    recordsPerCommit: records / commits,
    cpuUsPerRecord: (sum((r) => r.cpuSeconds) / records) * 1e6,
    mainUsPerRecord: (thread('main', 'cpu') / records) * 1e6,
    poolUsPerRecord: (thread('pool', 'cpu') / records) * 1e6,
    leveldbUsPerRecord: (thread('leveldb', 'cpu') / records) * 1e6,
    v8UsPerRecord: (thread('v8', 'cpu') / records) * 1e6,
    switchesPerCommit: switches / commits,
  }
}

log(`log-commit: ${cases.map((c) => c.name).join(', ')}; ${rounds} rounds of ${seconds} s; ${canPin() ? `pinned to core ${SERVER_CORE}` : 'NOT pinned (no taskset or one core)'}; in ${opts.dir}`)
const results = []
for (const c of cases) {
  const runs = Object.fromEntries(sides.map((side) => [side, []]))
  for (let round = 0; round < rounds; round++) {
    // a different side goes first each round, so the machine's drift does not favour one
    const order = sides.map((_, i) => sides[(i + round) % sides.length])
    for (const target of order) runs[target].push(await runOnce(target, c))
  }
  results.push({ case: c, runs, totals: Object.fromEntries(sides.map((side) => [side, total(runs[side])])) })
}

const rows = [['case', 'side', 'appends/s', 'records/s', 'ratio', 'p50 ms', 'p99 ms', 'rec/commit', 'cpu µs/rec', 'main', 'pool', 'ldb bg', 'v8', 'ctx sw/commit', 'runs (k rec/s)']]
const NAMES = { durable: 'durable min', log: 'embedded log', dsync: 'O_DSYNC', prealloc: 'pre-written' }
for (const r of results) {
  for (const side of sides) {
    const t = r.totals[side]
    rows.push([
      side === 'durable' ? `${r.case.name} (${r.case.concurrency}×${r.case.perAppend})` : '',
      NAMES[side],
      int(t.appendsPerSec),
      int(t.recordsPerSec),
      side === 'durable' ? '' : (t.recordsPerSec / r.totals.durable.recordsPerSec).toFixed(2),
      ms(t.p50),
      ms(t.p99),
      int(t.recordsPerCommit),
      t.cpuUsPerRecord.toFixed(2),
      t.mainUsPerRecord.toFixed(2),
      t.poolUsPerRecord.toFixed(2),
      t.leveldbUsPerRecord.toFixed(2),
      t.v8UsPerRecord.toFixed(2),
      t.switchesPerCommit.toFixed(1),
      r.runs[side].map((run) => (run.records / run.elapsed / 1000).toFixed(0)).join(' '),
    ])
  }
}
log('')
log(table(rows))
log('\nratio: records/s ÷ the durable minimum\'s records/s. cpu: all threads; main = the event loop,')
log('pool = libuv workers (fs writes and syncs, LevelDB writes), ldb bg = LevelDB compaction, v8 = GC helpers.')

const outDir = join(here, 'out')
await mkdir(outDir, { recursive: true })
const file = join(outDir, `log-commit-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
await writeFile(file, JSON.stringify({ machine: machine(), revision: revision(join(here, '..')), opts, results }, null, 2))
log(`\nwritten ${file}`)
