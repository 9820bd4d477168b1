/**
 * The fold alone: 300 000 new sessions' first events folded into one PartitionState, then a second
 * event of each the same day, then a third that converts a goal, three rounds. Run it in two checkouts (each built) to compare what
 * a change costs the fold per event, without HTTP or the log around it.
 *
 *   node bench/fold.mjs [sessions=300000]
 */
import { GoalIndex, PartitionState } from '../dist/stream/index.js'
import { hash64, initHash } from '../dist/sketch/index.js'
import { eventKey } from '../dist/schema/index.js'

const N = Number(process.argv[2] ?? 300_000)
await initHash()
const site = { site_id: 'bench', domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
const goals = new GoalIndex()
goals.add({ id: 'signup', site_id: 'bench', name: 'Signup', goal_type: 'custom_event', match_event: 'signup', created_at: site.created_at })
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
]
const now = Date.now()
const firsts = []
const seconds = []
const conversions = []
for (let i = 0; i < N; i++) {
  const id = `s${i}`
  const h = hash64(eventKey('bench', id))
  const e = {
    type: 'pageview', site_id: 'bench', session_id: id, ts: now - 1000, received_at: now, path: `/p${i % 300}`, url: 'https://bench.example/p',
    referrer: i % 3 ? `https://ref${i % 60}.example/x` : undefined, user_agent: AGENTS[i % 2], screen: { width: 1280 },
    utm: i % 4 ? undefined : { source: `src${i % 12}` }, country: 'DE',
  }
  firsts.push([e, h.hi, h.lo])
  seconds.push([{ ...e, ts: e.ts + 500, path: '/next' }, h.hi, h.lo])
  conversions.push([{ type: 'custom_event', site_id: 'bench', session_id: id, ts: e.ts + 800, received_at: now, event_name: 'signup' }, h.hi, h.lo])
}
for (let round = 0; round < 3; round++) {
  const state = new PartitionState(0, 1024)
  const t = performance.now()
  for (const [e, hi, lo] of firsts) state.fold(e, hi, lo, site, goals, 0)
  const t2 = performance.now()
  for (const [e, hi, lo] of seconds) state.fold(e, hi, lo, site, goals, 0)
  const t3 = performance.now()
  for (const [e, hi, lo] of conversions) state.fold(e, hi, lo, site, goals, 0)
  const t4 = performance.now()
  console.log(`a session's first event ${(1000 * (t2 - t) / N).toFixed(2)} µs, its second ${(1000 * (t3 - t2) / N).toFixed(2)} µs, a conversion ${(1000 * (t4 - t3) / N).toFixed(2)} µs`)
}
