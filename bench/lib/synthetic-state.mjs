/**
 * A site's query state built in-process with the real classes from dist/ (PartitionState →
 * GoalDays via recordConversion, SessionCounter per site-day), at sizes HTTP ingestion could not
 * reach in a bench's time: 30 M sessions take minutes through the log, seconds here.
 *
 * Sessions are 64-bit hashes derived from (day, index) by a bijective 32-bit mixer, so every
 * session is distinct, hashes are uniform (as xxHash's are) and the build is deterministic.
 * Goal i converts a share `rateOf(i)` of the day's sessions, each goal drawing independently; a
 * share `multiDayShare` of sessions spans midnight, is counted on both days and converts its goals
 * on both days too — the sessions the per-goal multi-day side index exists for.
 */
import { PartitionState } from '../../dist/stream/index.js'
import { SessionCounter } from '../../dist/sketch/index.js'
import { DAY_MS } from '../../dist/goals/index.js'

const UINT32 = 2 ** 32

/** murmur3's 32-bit finalizer: a bijection on uint32 with full avalanche */
export function fmix32(h) {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A realistic mix: goal i converts (i + 1) × 0.2 % of sessions (10 % for the 50th). */
export const defaultRate = (i) => (i + 1) * 0.002

export function makeGoals(siteId, count, createdAt = new Date().toISOString()) {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? { id: `goal-${i}`, site_id: siteId, name: `Visit /step-${i}`, goal_type: 'pageview', match_path: `/step-${i}`, created_at: createdAt }
      : { id: `goal-${i}`, site_id: siteId, name: `Event ${i}`, goal_type: 'custom_event', match_event: `event_${i}`, created_at: createdAt },
  )
}

/**
 * @param o { siteId, partitions, days, sessionsPerDay, goals, multiDayShare, today, exactThreshold,
 *            rateOf?, counters? (default true), onSession?(state, day, hi, lo, spans), progress?(text) }
 * @returns { parts, site, goals, stats: { sessions, entries, multiDaySessions, converted[] } }
 *   `converted[i]`: distinct sessions that converted goal i — what conversions() must answer.
 */
export function buildState(o) {
  const rateOf = o.rateOf ?? defaultRate
  const withCounters = o.counters ?? true
  const site = { site_id: o.siteId, domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
  const goals = makeGoals(o.siteId, o.goals)
  const parts = Array.from({ length: o.partitions }, (_, p) => new PartitionState(p, o.exactThreshold))
  if (o.days * o.sessionsPerDay >= UINT32) throw new RangeError('days × sessionsPerDay must stay below 2^32')

  const ids = goals.map((g) => g.id)
  const seeds = goals.map((_, i) => fmix32(0x5bd1e995 + i))
  const limits = goals.map((_, i) => Math.floor(Math.min(1, rateOf(i)) * UINT32))
  const multiLimit = Math.floor(o.multiDayShare * UINT32)
  const firstDay = o.today - o.days + 1
  const countSession = sessionCounting(parts, o.siteId, o.exactThreshold)
  const converted = new Float64Array(goals.length)
  const oneDay = [0, 0]
  const twoDays = [0, 0]
  let entries = 0
  let multiDaySessions = 0
  let lastReport = Date.now()

  for (let d = 0; d < o.days; d++) {
    const day = firstDay + d
    const dayStart = day * DAY_MS
    oneDay[0] = oneDay[1] = day
    twoDays[0] = day
    twoDays[1] = day + 1
    for (let s = 0; s < o.sessionsPerDay; s++) {
      const lo = fmix32((d * o.sessionsPerDay + s) ^ 0x2545f491)
      const hi = fmix32(lo ^ 0x9e3779b9)
      const p = fmix32(hi ^ 0x68e31da4) % o.partitions
      const state = parts[p]
      const spans = d < o.days - 1 && fmix32(lo ^ 0x1b873593) < multiLimit
      if (withCounters) {
        countSession(state, day, hi, lo)
        if (spans) countSession(state, day + 1, hi, lo)
      }
      o.onSession?.(state, day, hi, lo, spans)
      if (spans) multiDaySessions++
      const ts = dayStart + Math.floor((s * DAY_MS) / o.sessionsPerDay)
      const span = spans ? twoDays : oneDay
      for (let g = 0; g < ids.length; g++) {
        if (fmix32(lo ^ seeds[g]) >= limits[g]) continue
        state.recordConversion(ids[g], hi, lo, day, ts, span)
        converted[g]++
        entries++
        if (spans) {
          // the same session completes the goal again after midnight
          state.recordConversion(ids[g], hi, lo, day + 1, (day + 1) * DAY_MS + 60_000, span)
          entries++
        }
      }
    }
    if (o.progress && (Date.now() - lastReport > 1000 || d === o.days - 1)) {
      lastReport = Date.now()
      o.progress(`built day ${d + 1}/${o.days} (${(entries / 1e6).toFixed(1)} M goal-day entries)`)
    }
  }
  for (const state of parts) state.takeDirty()
  return {
    parts,
    site,
    goals,
    firstDay,
    stats: { sessions: o.days * o.sessionsPerDay, entries, multiDaySessions, converted: [...converted] },
  }
}

/**
 * How the processor counts a session into its site-day counter: PartitionState.countSession when
 * this build has it (it also keeps the bookkeeping the query caches read), else the counter itself.
 */
function sessionCounting(parts, siteId, exactThreshold) {
  if (typeof PartitionState.prototype.countSession === 'function') {
    return (state, day, hi, lo) => state.countSession(siteId, day, hi, lo)
  }
  return (state, day, hi, lo) => {
    const days = state.site(siteId).days
    let c = days.get(day)
    if (c === undefined) days.set(day, (c = new SessionCounter(exactThreshold)))
    c.add(hi, lo)
  }
}
