/**
 * What each Kafka codec costs and saves on Goalpost's own records, for GOALPOST_KAFKA_COMPRESSION:
 *
 *   codec    the codecs alone (codecs.ts), no broker: batches of logged events as the ingest route
 *            writes them (the bench's browser-like mix, keyed by site and session), 1 000 events a
 *            batch — about one group commit under load. Size against the raw records, and CPU
 *            milliseconds per MB of records to compress and to decompress, median of `rounds`.
 *   append   with a broker (GOALPOST_KAFKA_BROKERS): KafkaLog.append of single events from 64
 *            concurrent senders for `seconds` per codec, topics created per codec; events/s and
 *            this process's CPU per 1 000 events. Codecs alternate over `rounds`.
 *
 * Run after a build: `node bench/kafka-codecs.mjs [seconds] [rounds]`.
 */
import { randomBytes } from 'node:crypto'
import { CODECS } from '../dist/log/kafka/codecs.js'
import { KafkaLog } from '../dist/log/index.js'
import { SyntheticStream } from '../dist/cli/synthetic-stream.js'
import { BENCH_GOALS } from '../dist/cli/bench-goals.js'
import { DEFAULT_MIX, parseMix } from '../dist/cli/event-mix.js'
import { loggedRecordEncoder } from '../dist/cli/kafka-record.js'
import { machine } from './lib/machine.mjs'

const SECONDS = Number(process.argv[2] ?? 5)
const ROUNDS = Number(process.argv[3] ?? 3)
const BATCH = 1000
const BATCHES = 20
const SENDERS = 64
const NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

const stream = new SyntheticStream({
  siteIds: ['shop.example', 'blog.example'], goals: BENCH_GOALS.slice(0, 3), mix: parseMix(DEFAULT_MIX),
  eventsPerSession: 6, openSessions: 10_000, run: randomBytes(4).toString('hex'),
})
const encode = await loggedRecordEncoder(['shop.example', 'blog.example'], 90)
const records = Array.from({ length: BATCH * BATCHES }, (_, i) => encode(stream.body(i)))

/** a batch's records section, roughly as Kafka lays it out: key, value, a few bytes of framing each */
const batches = Array.from({ length: BATCHES }, (_, b) => Buffer.concat(records.slice(b * BATCH, (b + 1) * BATCH).flatMap((r) => [
  Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]), Buffer.from(r.key), Buffer.from(r.value),
])))
const rawBytes = batches.reduce((n, b) => n + b.length, 0)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const cpuMs = (from) => {
  const d = process.cpuUsage(from)
  return (d.user + d.system) / 1000
}

async function codecCosts() {
  const rows = []
  for (const name of NAMES.slice(1)) {
    const codec = CODECS[name]
    await codec.compress(batches[0]) // warm: the zstd WebAssembly module compiles on first use
    const comp = []
    const decomp = []
    let packed = []
    for (let r = 0; r < ROUNDS; r++) {
      let t = process.cpuUsage()
      packed = []
      for (const b of batches) packed.push(await codec.compress(b))
      comp.push(cpuMs(t))
      t = process.cpuUsage()
      for (const p of packed) await codec.decompress(p)
      decomp.push(cpuMs(t))
    }
    const size = packed.reduce((n, p) => n + p.length, 0)
    const mb = rawBytes / 1e6
    rows.push({ codec: name, ratio: size / rawBytes, compressMsPerMB: median(comp) / mb, decompressMsPerMB: median(decomp) / mb })
  }
  return rows
}

async function appendRate(log, topic) {
  const stopAt = performance.now() + SECONDS * 1000
  let n = 0
  const cpu = process.cpuUsage()
  const start = performance.now()
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    while (performance.now() < stopAt) {
      const r = records[n++ % records.length]
      await log.append(topic, [{ key: r.key, value: Buffer.from(r.value), timestamp: Date.now() }])
    }
  }))
  const elapsed = (performance.now() - start) / 1000
  return { eventsPerSecond: n / elapsed, cpuMsPer1k: cpuMs(cpu) / (n / 1000) }
}

async function appendCosts(brokers) {
  const prefix = `bench-codecs-${randomBytes(3).toString('hex')}`
  const logs = {}
  for (const name of NAMES) {
    logs[name] = await KafkaLog.open({ brokers, nodeId: `${prefix}-${name}`, compression: name })
    await logs[name].createTopic({ name: `${prefix}.${name}`, partitions: 4 })
  }
  const runs = Object.fromEntries(NAMES.map((n) => [n, []]))
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 === 0 ? NAMES : [...NAMES].reverse()) {
      runs[name].push(await appendRate(logs[name], `${prefix}.${name}`))
      process.stderr.write(`append ${name} round ${r + 1}: ${Math.round(runs[name].at(-1).eventsPerSecond)} events/s\n`)
    }
  }
  for (const log of Object.values(logs)) await log.close()
  return NAMES.map((name) => ({
    codec: name,
    eventsPerSecond: median(runs[name].map((x) => x.eventsPerSecond)),
    cpuMsPer1k: median(runs[name].map((x) => x.cpuMsPer1k)),
  }))
}

const m = await machine()
console.log(`machine: ${JSON.stringify(m)}`)
console.log(`records: ${records.length} logged events, ${(rawBytes / records.length).toFixed(0)} bytes each on average, ${BATCH} a batch`)
console.log('\n| codec | size of the records | compress, CPU ms per MB | decompress, CPU ms per MB |\n|---|---|---|---|')
for (const r of await codecCosts()) {
  console.log(`| ${r.codec} | ${(r.ratio * 100).toFixed(1)} % | ${r.compressMsPerMB.toFixed(1)} | ${r.decompressMsPerMB.toFixed(1)} |`)
}
const brokers = process.env.GOALPOST_KAFKA_BROKERS?.split(',').filter(Boolean)
if (brokers?.length) {
  console.log(`\nKafkaLog.append, ${SENDERS} senders, one event each, ${SECONDS} s per codec, median of ${ROUNDS}:\n`)
  console.log('| codec | events/s | CPU ms per 1 000 events (this process) |\n|---|---|---|')
  for (const r of await appendCosts(brokers)) console.log(`| ${r.codec} | ${Math.round(r.eventsPerSecond)} | ${r.cpuMsPer1k.toFixed(1)} |`)
}
