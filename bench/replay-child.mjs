/**
 * One case of bench/replay.mjs, in a process of its own (pinned by the runner), reading the
 * whole events topic once and printing one JSON line: records seen, milliseconds and CPU
 * milliseconds of the read, and what the case adds. Settings come in the environment: the node's
 * (GOALPOST_LOG, GOALPOST_DATA_DIR or GOALPOST_KAFKA_BROKERS and GOALPOST_KAFKA_PREFIX,
 * GOALPOST_PARTITIONS), BENCH_EXPECT (the committed records the topic holds), BENCH_OUT (replay's
 * output directory), BENCH_DIST (the build to measure, default ../dist: another checkout's build
 * measures the code before a change).
 *
 *   raw        kafkajs' own consumer, eachBatch, read_committed: the client's ceiling (Kafka only)
 *   raw-decode the same, plus decoding every record as the fold does (its header, site and path)
 *   read       the node's log (EventLog.read), partition after partition, 5 000 records a call
 *   read-decode the same, plus decoding every record as the fold does (its header, site and path)
 *   read-fold  the same, plus folding every record into its partition's state: no store, no snapshot
 *   replay     `goalpost replay` (src/cli/replay.ts) into an empty directory
 */
import { randomBytes } from 'node:crypto'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'

const which = process.argv[2]
const brokers = process.env.GOALPOST_KAFKA_BROKERS?.split(',')
const topic = `${process.env.GOALPOST_KAFKA_PREFIX}.events`
const expect = Number(process.env.BENCH_EXPECT)
const dist = resolve(process.env.BENCH_DIST ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'))
const load = (module) => import(pathToFileURL(join(dist, module)).href)

const { readEvent, readEventAt } = await load('log/index.js')
const { initHash } = await load('sketch/index.js')
await initHash()
/** 1 for a record decoded as the fold starts every one: the header, the site and the path */
const readers = []
/** a record read as the fold reads it: with a reader kept from record to record where the build has them */
const readRecord = (value) => (readEventAt ? readEventAt(readers, 0, value) : readEvent(value))
const decoded = (value) => {
  const e = readRecord(value)
  return e.ts > 0 && e.site_id.length > 0 && e.path !== '' ? 1 : 0
}

/** Times `work`, which resolves with the records it saw and anything else worth reporting. */
async function timed(work) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const r = await work()
  const ms = r.ms ?? performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { case: which, ...r, ms, wallMs: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 }
}

/** kafkajs' consumer, timed from its first batch: a group join is not a read. */
async function raw(parse) {
  const kafka = new Kafka({ clientId: 'bench-raw', brokers, logLevel: logLevel.NOTHING })
  const consumer = kafka.consumer({ groupId: `bench-raw-${randomBytes(6).toString('hex')}`, maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  let records = 0
  let first
  let parsed = 0
  const done = new Promise((resolve) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        first ??= performance.now()
        if (parse) for (const m of batch.messages) parsed += decoded(m.value)
        records += batch.messages.length
        if (records >= expect) resolve(performance.now())
      },
    })
  })
  const end = await done
  await consumer.disconnect()
  return { records, ms: end - first, ...(parse ? { parsed } : {}) }
}

/** The node's own log, opened as `goalpost replay` opens it. */
async function read(parse) {
  const { loadConfig } = await load('config/index.js')
  const { openLog } = await load('log/index.js')
  const logs = await openLog(loadConfig(process.env), { self: `bench-read-${process.pid}` })
  const t0 = performance.now()
  let records = 0
  let parsed = 0
  for (let p = 0; p < logs.log.partitionsOf(logs.events); p++) {
    const end = await logs.log.endOffset(logs.events, p)
    let from = await logs.log.beginOffset(logs.events, p)
    while (from < end) {
      const batch = await logs.log.read(logs.events, p, from, 5000)
      if (batch.length === 0) break
      if (parse) for (const r of batch) parsed += decoded(r.value)
      records += batch.length
      from = batch[batch.length - 1].offset + 1
    }
  }
  const ms = performance.now() - t0
  await logs.close()
  return { records, ms, ...(parse ? { parsed } : {}) }
}

/**
 * The node's log read as `read` reads it, each record decoded and folded into its partition's state
 * (PartitionState.fold, as a replay folds it), with no store: no summaries looked up, no snapshot.
 * What a replay cannot do without, beside the read: its rate against `read`'s bounds replay's.
 */
async function readFold() {
  const { loadConfig } = await load('config/index.js')
  const { openLog } = await load('log/index.js')
  const { Catalog } = await load('catalog/index.js')
  const { GoalIndex, PartitionState } = await load('stream/index.js')
  const config = loadConfig(process.env)
  const logs = await openLog(config, { self: `bench-read-fold-${process.pid}` })
  const catalog = new Catalog(logs.config)
  await catalog.load()
  const goals = new GoalIndex()
  for (const g of catalog.goals.values()) goals.add(g)
  const t0 = performance.now()
  let records = 0
  let sessions = 0
  for (let p = 0; p < logs.log.partitionsOf(logs.events); p++) {
    const state = new PartitionState(p, config.exactThreshold)
    const end = await logs.log.endOffset(logs.events, p)
    let from = await logs.log.beginOffset(logs.events, p)
    while (from < end) {
      const batch = await logs.log.read(logs.events, p, from, 5000)
      if (batch.length === 0) break
      state.summaries.clock = Date.now()
      for (const r of batch) {
        const e = readRecord(r.value)
        const site = catalog.sites.get(e.site_id)
        if (site !== undefined) state.fold(e, e.hashHi, e.hashLo, site, goals, r.offset)
      }
      records += batch.length
      from = batch[batch.length - 1].offset + 1
    }
    sessions += state.summaries.size
  }
  const ms = performance.now() - t0
  await logs.close()
  return { records, ms, sessions }
}

async function replay() {
  const { loadConfig } = await load('config/index.js')
  const { replay } = await load('cli/replay.js')
  const lines = []
  const r = await replay(loadConfig(process.env), { out: process.env.BENCH_OUT, bar: false, print: (line) => lines.push(line) })
  // the fold loop's own time, as the command reports it; wallMs adds opening the logs and the catalog
  return { records: r.records, folded: r.folded, ms: r.ms, printed: lines.at(-1) }
}

const cases = { raw: () => raw(false), 'raw-decode': () => raw(true), read: () => read(false), 'read-decode': () => read(true), 'read-fold': readFold, replay }
if (!cases[which]) {
  process.stderr.write(`usage: replay-child.mjs ${Object.keys(cases).join('|')}\n`)
  process.exit(2)
}
try {
  const result = await timed(cases[which])
  if (result.records !== expect) throw new Error(`${which} saw ${result.records} records, the topic holds ${expect} committed ones`)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
} catch (err) {
  process.stderr.write(`${err.stack ?? err}\n`)
  process.exit(1)
}
