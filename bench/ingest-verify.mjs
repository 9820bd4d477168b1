/**
 * Did the service count what it acknowledged? wrk reports how many requests were answered 2xx, not
 * which: when it stops, each connection may have one request in flight that the service still
 * takes, and a failed request may be any one. So the expectation is a range. With C requests
 * acknowledged and `slack` = connections + failed requests:
 *   - the service's accepted-events counter grew by C × events-per-request … + slack × events-per-request;
 *   - GET /api/goals reports, per goal, between [what the first C requests convert] − slack ×
 *     events-per-request and [what the first C + slack requests convert] (requests are numbered
 *     in the order wrk built them: SyntheticStream maps each number to its session);
 *   - total_sessions lies in the same kind of range, widened by the HyperLogLog's 3 standard errors.
 * With fresh sessions the range is a few hundred events wide out of hundreds of thousands.
 */
import { SKETCH_TOLERANCE, Tally, readCounts } from '../dist/cli/index.js'
import { log } from './lib/proc.mjs'

export async function verifyPhase(service, phase, goals) {
  const r = phase.runs.service
  const perRequest = phase.eventsPerRequest
  const slackRequests = phase.connections + r.non2xx + r.errors
  const lost = slackRequests * perRequest
  const [atC] = Tally.ofFirst(phase.stream, r.ok, perRequest)
  const [atMost] = Tally.ofFirst(phase.stream, r.ok + slackRequests, perRequest)
  const [got] = await readCounts(new URL(service.base), service.token, [phase.siteId], goals)
  const sessions = {
    min: Math.floor(Math.max(0, atC.sessions - lost) * (1 - SKETCH_TOLERANCE)),
    max: Math.ceil(atMost.sessions * (1 + SKETCH_TOLERANCE)),
    got: got.sessions,
  }
  const conversions = goals.map((_, g) => ({ min: Math.max(0, atC.conversions[g] - lost), max: atMost.conversions[g], got: got.conversions[g] }))
  const within = (x) => x.got !== null && x.got >= x.min && x.got <= x.max
  const v = { counter: r.counts, sessions, conversions }
  v.ok = r.counts.ok && within(sessions) && conversions.every(within)
  const range = (x) => `${x.got} in ${x.min}…${x.max}`
  log(`  check ${phase.name}: accepted counter +${r.counts.serverDelta} for ${r.counts.client} acknowledged (≤ ${r.counts.slack} in flight); total_sessions ${range(sessions)}; conversions ${conversions.map(range).join(', ')} → ${v.ok ? 'OK' : 'MISMATCH'}`)
  return v
}
