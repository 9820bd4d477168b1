/**
 * The floor under an event's CPU: what the steps every ingested or replayed event must take cost
 * on their own, in one process on one core, measured in one run — parsing a batch's JSON text,
 * validating it, encoding the log record, decoding it, and the fold into a partition's state.
 * Together with a baseline measured beside them (the durable minimum of `bench/run.mjs ingest`,
 * the plain read of `bench/replay.mjs`) they say how near a target can come while these steps stay
 * as they are, whatever is trimmed around them.
 *
 * The events are the bench's synthetic stream (`goalpost bench`'s mix, 6 events a session, one site,
 * the first three bench goals). Every round folds into a fresh partition state, as a replay does;
 * the first round is a warm-up. CPU is the process's user + system time around each step.
 *
 * Then what the fold allocates: V8's sampling heap profiler (an allocation sampled every 256 bytes
 * on average, those the collector freed since counted too) over the decode and fold of 100 000
 * events into a state that has seen none of them, then of the same events again (every session and
 * value known: what a repeat event costs, after two passes over them unmeasured), in bytes an event,
 * with the places that allocate most; and the same for the live fold, which gets records primed
 * with the validated event.
 *
 *   node bench/floor.mjs [--events 600000] [--rounds 5] [--batch 100]
 */
import { spawnSync } from 'node:child_process'
import { Session } from 'node:inspector/promises'
import { parseArgs } from 'node:util'
import { BENCH_GOALS, DEFAULT_MIX, SyntheticStream, parseMix } from '../dist/cli/index.js'
import { validateBatch } from '../dist/ingest/validate-batch.js'
import { eventLogRecord, readEventAt } from '../dist/log/index.js'
import { initHash } from '../dist/sketch/index.js'
import { GoalIndex, PartitionState } from '../dist/stream/index.js'
import { SERVER_CORE, canPin, log } from './lib/proc.mjs'
import { table } from './lib/table.mjs'
import { machine, revision } from './lib/machine.mjs'

const { values: o } = parseArgs({
  options: {
    events: { type: 'string', default: '600000' },
    rounds: { type: 'string', default: '5' },
    batch: { type: 'string', default: '100' },
    pinned: { type: 'boolean', default: false },
  },
})

// the measured process has a core of its own: run again under taskset
if (!o.pinned && canPin()) {
  const r = spawnSync('taskset', ['-c', String(SERVER_CORE), process.execPath, ...process.execArgv, process.argv[1], ...process.argv.slice(2), '--pinned'], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}

const EVENTS = Number(o.events)
const ROUNDS = Number(o.rounds)
const BATCH = Number(o.batch)
const SITE_ID = 'floor-bench'
const NOW = Date.now()
await initHash()

const site = { site_id: SITE_ID, domain: null, timezone: 'UTC', created_at: new Date(NOW - 86_400_000).toISOString() }
const goals = new GoalIndex()
BENCH_GOALS.slice(0, 3).forEach((g, i) => goals.add({ id: `g${i}`, site_id: SITE_ID, name: `g${i}`, created_at: site.created_at, ...g.body }))
const ctx = () => ({ now: Date.now(), retentionMs: 90 * 86_400_000, site: (id) => (id === SITE_ID ? site : undefined), botFilter: true })

/** A run tag of its own per round: every round's sessions are new ones. */
function stream(run) {
  return new SyntheticStream({
    siteIds: [SITE_ID], goals: BENCH_GOALS.slice(0, 3), mix: parseMix(DEFAULT_MIX), eventsPerSession: 6, openSessions: 10_000, run,
  })
}

/**
 * CPU µs spent in `fn`, added to `into[key]`. The steps go a batch at a time, as the route takes
 * them: a batch's events are still in the caches when the next step reads them, and a round's
 * worth alive at once would make the collector's work a function of the bench's own heap.
 */
function timed(into, key, fn) {
  const c0 = process.cpuUsage()
  const out = fn()
  const c = process.cpuUsage(c0)
  into[key] = (into[key] ?? 0) + c.user + c.system
  return out
}

const CHUNK = BATCH
const rounds = []
const readers = []
for (let r = 0; r < ROUNDS; r++) {
  const events = stream(`r${r}-${NOW.toString(36)}`)
  const state = new PartitionState(0, 8192)
  const us = {}
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const texts = []
    for (let i = from; i < Math.min(EVENTS, from + CHUNK); i += BATCH) {
      const parts = []
      for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) parts.push(events.body(j))
      texts.push(`[${parts.join(',')}]`)
    }
    timed(us, 'parse', () => {
      let n = 0
      for (const t of texts) n += JSON.parse(t).length
      return n
    })
    // validation changes the parsed events in place: parsed again, untimed
    const parsed = texts.map((t) => JSON.parse(t))
    const valid = timed(us, 'validate', () => {
      const out = []
      for (const raw of parsed) {
        const v = validateBatch(raw, ctx())
        if (!v.ok) throw new Error(`the bench built a batch the service refuses: ${v.error}`)
        for (const a of v.results) if (a.kind === 'accept') out.push(a.event)
      }
      return out
    })
    if (valid.length !== parsed.reduce((n, b) => n + b.length, 0)) throw new Error('the bench built events the service drops')
    // as the route does: each record goes to the log and is let go (kept, its slab could not be reused)
    timed(us, 'encode', () => {
      let n = 0
      for (const e of valid) n += eventLogRecord(e).value.length
      return n
    })
    const bytes = valid.map((e) => Buffer.from(eventLogRecord(e).value))
    // read as the fold reads a batch: a reader a record, kept from batch to batch
    timed(us, 'decode', () => {
      let n = 0
      for (let i = 0; i < bytes.length; i++) {
        const e = readEventAt(readers, i, bytes[i])
        n += e.site_id.length > 0 && e.path !== '' ? 1 : 0
      }
      return n
    })
    // the fold as a replay runs it: records decoded as it reads them, into a fresh partition
    state.summaries.clock = Date.now()
    timed(us, 'decodeFold', () => {
      for (let i = 0; i < bytes.length; i++) {
        const e = readEventAt(readers, i, bytes[i])
        state.fold(e, e.hashHi, e.hashLo, site, goals, from + i)
      }
    })
  }
  const per = (k) => us[k] / EVENTS
  const round = { parse: per('parse'), validate: per('validate'), encode: per('encode'), decode: per('decode'), fold: per('decodeFold') - per('decode'), sessions: state.summaries.size }
  rounds.push(round)
  log(`round ${r + 1}${r === 0 ? ' (warm-up)' : ''}: parse ${round.parse.toFixed(2)} · validate ${round.validate.toFixed(2)} · encode ${round.encode.toFixed(2)} · decode ${round.decode.toFixed(2)} · fold ${round.fold.toFixed(2)} µs an event; ${round.sessions} sessions`)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const kept = rounds.slice(1)
const m = Object.fromEntries(['parse', 'validate', 'encode', 'decode', 'fold'].map((k) => [k, median(kept.map((r) => r[k]))]))
const f = (x) => x.toFixed(2)
const rev = revision()
const mc = machine()
process.stdout.write(`\ngoalpost bench floor at ${rev.commit}${rev.srcDirty ? ' (src changed)' : ''} — ${mc.nproc} cores (${mc.cpuModel}), node ${mc.node}, load average ${mc.loadAverage.map((x) => x.toFixed(2)).join(' ')}; ${EVENTS} events a round, batches of ${BATCH}, median of ${kept.length} rounds after a warm-up\n\n`)
process.stdout.write(table([
  ['step', 'CPU µs an event'],
  ['JSON.parse of the batch text', f(m.parse)],
  ['validation (validateBatch; the parse not counted)', f(m.validate)],
  ['encoding the log record (with the session hash)', f(m.encode)],
  ['decoding the record as the fold reads it', f(m.decode)],
  ['the fold (PartitionState.fold; decoding not counted)', f(m.fold)],
]) + '\n')
const batchFloor = m.parse + m.validate + m.encode + m.fold
process.stdout.write(`\nbeyond what a durable minimum does for a batch (read, JSON.parse, write, sync, answer): validate + encode + fold = ${f(m.validate + m.encode + m.fold)} µs an event\n`)
process.stdout.write(`an ingested event at the least, counting of the durable minimum's work only its parse: ${f(batchFloor)} µs, at most ${Math.round(1e6 / batchFloor).toLocaleString('en-US')} events a second on one core\n`)
process.stdout.write(`a replay beyond reading the log: decode + fold = ${f(m.decode + m.fold)} µs an event\n`)

/**
 * Bytes allocated an event while `fold` runs over `n` events, by V8's sampling heap profiler, with
 * the call sites (three frames) that allocated most.
 */
async function allocated(n, fold) {
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  fold()
  const { profile } = await session.post('HeapProfiler.stopSampling')
  session.disconnect()
  const frames = new Map()
  const name = (f) => `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`
  ;(function walk(node, stack) {
    const here = [...stack, name(node.callFrame)].slice(-3)
    frames.set(node.id, here.join(' < '))
    for (const c of node.children) walk(c, here)
  })(profile.head, [])
  const by = new Map()
  let total = 0
  for (const sample of profile.samples) {
    total += sample.size
    const at = frames.get(sample.nodeId)
    by.set(at, (by.get(at) ?? 0) + sample.size)
  }
  return { perEvent: total / n, top: [...by].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([at, bytes]) => [at, bytes / n]) }
}

{
  const ALLOC_EVENTS = Math.min(EVENTS, 100_000)
  const events = stream(`alloc-${NOW.toString(36)}`)
  const bytes = []
  /** the records as the live fold gets them: primed with the validated event, nothing to decode */
  const primed = []
  for (let i = 0; i < ALLOC_EVENTS; i += BATCH) {
    const parts = []
    for (let j = i; j < Math.min(ALLOC_EVENTS, i + BATCH); j++) parts.push(events.body(j))
    const v = validateBatch(JSON.parse(`[${parts.join(',')}]`), ctx())
    for (const a of v.results) {
      if (a.kind !== 'accept') continue
      const logged = eventLogRecord(a.event)
      bytes.push(Buffer.from(logged.value))
      primed.push(logged.decoded)
    }
  }
  /**
   * What `fold(state)` allocates into a fresh state, then again over the same events. The first pass
   * of repeat events also runs code no event took before (and the optimizing compiler's first tries
   * at it, which allocate what optimized code does not): two passes unmeasured before the second
   * measure, as a stream's steady state has had.
   */
  const freshAndAgain = async (n, fold) => {
    const state = new PartitionState(0, 8192)
    state.summaries.clock = Date.now()
    const first = await allocated(n, () => fold(state))
    fold(state)
    fold(state)
    return { first, again: await allocated(n, () => fold(state)) }
  }
  const { first, again } = await freshAndAgain(bytes.length, (state) => {
    for (let i = 0; i < bytes.length; i++) {
      const e = readEventAt(readers, i % BATCH, bytes[i])
      state.fold(e, e.hashHi, e.hashLo, site, goals, i)
    }
  })
  process.stdout.write(`\nallocated by decode + fold (sampled): ${first.perEvent.toFixed(1)} bytes an event into a fresh state, ${again.perEvent.toFixed(1)} folding the same ${bytes.length} events again (every session and value known, the code warmed on such events)\n`)
  for (const [label, r] of [['fresh', first], ['again', again]]) {
    process.stdout.write(table([[`most, ${label}`, 'bytes an event'], ...r.top.map(([at, b]) => [at, b.toFixed(1)])]) + '\n')
  }
  // the live fold: the same events as ingest hands them on
  const live = await freshAndAgain(primed.length, (state) => {
    for (let i = 0; i < primed.length; i++) state.fold(primed[i], primed[i].hashHi, primed[i].hashLo, site, goals, i)
  })
  process.stdout.write(`the live fold (records primed at ingest, nothing decoded): ${live.first.perEvent.toFixed(1)} bytes an event into a fresh state, ${live.again.perEvent.toFixed(1)} again\n`)
}
