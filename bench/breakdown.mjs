/**
 * The breakdown query (docs/api.md §9.4) on state built by the real fold: sessions with a referrer,
 * UTM fields, a user agent and a country each, some converting one goal. Times one goal's
 * breakdown over the whole window with the converted sessions' summaries in memory (hot), and
 * again after a snapshot to LevelDB has taken them out of memory (cold: each read back from the
 * store), and what the per-value session counters weigh.
 *
 *   node bench/breakdown.mjs [sessionsPerDay=20000] [days=30] [partitions=4]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GoalIndex, PartitionState } from '../dist/stream/index.js'
import { StateStore } from '../dist/store/index.js'
import { breakdownPartial } from '../dist/query/breakdown.js'
import { hash64, initHash } from '../dist/sketch/index.js'
import { eventKey } from '../dist/schema/index.js'
import { DAY_MS } from '../dist/goals/index.js'
import { summarize } from './lib/stats.mjs'
import { AGENTS, COUNTRIES } from './lib/breakdown-state.mjs'

const [perDay = 20_000, days = 30, partitions = 4] = process.argv.slice(2).map(Number)
await initHash()

const site = { site_id: 'bench', domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
const goal = { id: 'signup', site_id: 'bench', name: 'Signup', goal_type: 'custom_event', match_event: 'signup', created_at: site.created_at }
const goals = new GoalIndex()
goals.add(goal)
const parts = Array.from({ length: partitions }, (_, p) => new PartitionState(p, 1024))

let x = 12345
const rnd = (n) => {
  x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff
  return x % n
}

const today = Math.floor(Date.now() / DAY_MS)
const started = performance.now()
let events = 0
let converted = 0
for (let d = days - 1; d >= 0; d--) {
  const base = (today - d) * DAY_MS
  for (let i = 0; i < perDay; i++) {
    const id = `d${d}-${i}`
    const h = hash64(eventKey('bench', id))
    const state = parts[h.lo % partitions >>> 0]
    const ts = base + (i % 80_000) * 1000
    const first = {
      type: 'pageview', site_id: 'bench', session_id: id, ts, received_at: ts, path: `/p${rnd(300)}`, url: 'https://bench.example/',
      referrer: rnd(3) ? `https://ref${rnd(60)}.example/x` : undefined, user_agent: AGENTS[rnd(AGENTS.length)], screen: { width: 1280 },
      utm: rnd(4) ? undefined : { source: `src${rnd(12)}`, medium: rnd(2) ? 'cpc' : 'email', campaign: `c${rnd(40)}` }, country: COUNTRIES[rnd(COUNTRIES.length)],
    }
    state.fold(first, h.hi, h.lo, site, goals, events++)
    if (rnd(10) === 0) {
      state.fold({ type: 'custom_event', site_id: 'bench', session_id: id, ts: ts + 60_000, received_at: ts, event_name: 'signup' }, h.hi, h.lo, site, goals, events++)
      converted++
    }
  }
}
const buildSeconds = (performance.now() - started) / 1000
console.log(`built ${days} days × ${perDay} sessions (${events} events folded, ${converted} conversions) in ${buildSeconds.toFixed(1)} s: ${(events / buildSeconds / 1000).toFixed(0)} k events/s`)

let valueBytes = 0
let dayBytes = 0
let values = 0
for (const state of parts) {
  const s = state.sites.get('bench')
  for (const c of s.days.values()) dayBytes += c.memoryBytes()
  for (const groups of s.values.values()) for (const g of groups) g.forEach((_, c) => { valueBytes += c.memoryBytes(); values++ })
}
const sessions = days * perDay
console.log(`value counters: ${values} (${(valueBytes / 2 ** 20).toFixed(1)} MiB, ${(valueBytes / sessions).toFixed(0)} B per session-day); day counters ${(dayBytes / 2 ** 20).toFixed(1)} MiB`)
// what the service's hourly pass does to the days before yesterday: pack the counters' exact sets
let packedBytes = 0
for (const state of parts) {
  for (const [day, groups] of state.sites.get('bench').values) {
    for (const g of groups) {
      g.forEach((_, c) => {
        if (day < today - 1) c.pack()
        packedBytes += c.memoryBytes()
      })
    }
  }
}
console.log(`value counters with the days before yesterday packed: ${(packedBytes / 2 ** 20).toFixed(1)} MiB, ${(packedBytes / sessions).toFixed(0)} B per session-day`)

const window = { from: today - days + 1, to: today }
const query = (by) => ({ kind: 'breakdown', site_id: 'bench', goal_id: 'signup', window, by })
const hot = async (p, hks) => hks.map((hk) => parts[p].summaries.get(hk))

async function timeIt(fn, runs) {
  const samples = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await fn()
    samples.push(performance.now() - t)
  }
  return summarize(samples)
}

const run = (lookup) => async (by) => {
  let n = 0
  for (const state of parts) n += (await breakdownPartial(state, query(by), lookup)).conversions
  if (n !== converted) throw new Error(`breakdown counted ${n} conversions of ${converted}`)
}
for (const by of ['source', 'entry_page', 'country']) {
  const r = await timeIt(() => run(hot)(by), 10)
  console.log(`hot, by ${by}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${converted} converted sessions, ${(1000 * r.p50 / converted).toFixed(2)} µs each)`)
}

// the same state with every summary in LevelDB and none in memory
const dir = await mkdtemp(join(tmpdir(), 'goalpost-breakdown-'))
const store = await StateStore.open(dir)
for (const state of parts) {
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)
  state.evictOver(0)
}
const cold = (p, hks) => store.getSummaries(p, hks)
for (const by of ['source', 'country']) {
  const r = await timeIt(() => run(cold)(by), 3)
  console.log(`cold, by ${by}: p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms (${(1000 * r.p50 / converted).toFixed(2)} µs per converted session)`)
}
await store.close()
await rm(dir, { recursive: true, force: true })
