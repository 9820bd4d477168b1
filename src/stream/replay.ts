import type { EventLog } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { Goal } from '../schema/index.js'
import { eventKey, type LoggedEvent } from '../schema/index.js'
import { hash64 } from '../sketch/index.js'
import { dayOf } from '../goals/index.js'
import { GoalIndex } from './goal-index.js'
import type { PartitionState } from './partition-state.js'
import { pageOf } from './session-summary.js'

const CHUNK = 2000
const PROGRESS_EVERY = 100_000

export interface Replay {
  log: EventLog
  topic: string
  catalog: Catalog
  state: PartitionState
  siteId: string
  /** the goals to count; events of other goals and sites are skipped */
  goals: Goal[]
  /** also rebuild the site's per-day session counters */
  counters: boolean
  /** the first offset the live fold counts: the replay stops below it */
  until: number
  stopped(): boolean
  onProgress?(message: string, fields: Record<string, unknown>): void
}

/**
 * Folds one partition's retained log below `until` into one site's goals (and day counters) only:
 * how a new goal counts the past, and how a site's days are rebuilt in a new time zone. Every
 * update is a join, so overlapping the live fold is harmless. Yields between chunks so ingest and
 * queries go on. Resolves false when stopped before the end.
 */
export async function replayLog(r: Replay): Promise<boolean> {
  const index = new GoalIndex()
  for (const g of r.goals) index.add(g)
  const matched: string[] = []
  const currencies = index.currencies(r.siteId)
  const { state } = r
  let from = await r.log.beginOffset(r.topic, state.partition)
  while (from < r.until) {
    if (r.stopped()) return false
    const site = r.catalog.sites.get(r.siteId)
    if (!site) return false
    const records = await r.log.read(r.topic, state.partition, from, Math.min(CHUNK, r.until - from))
    const below = records.filter((record) => record.offset < r.until)
    if (below.length === 0) break
    for (const record of below) {
      const e = JSON.parse(record.value.toString()) as LoggedEvent
      if (e.site_id !== r.siteId) continue
      matched.length = 0
      index.matches(e.site_id, pageOf(e), e, matched)
      if (matched.length === 0 && !r.counters) continue
      const h = hash64(eventKey(e.site_id, e.session_id))
      const day = dayOf(e.ts, site.timezone)
      const siteState = r.counters ? state.countSession(r.siteId, day, h.hi, h.lo) : state.site(r.siteId)
      const hour = state.hourOf(siteState, e.ts, day, site.timezone)
      if (r.counters && hour >= 0) state.countHour(r.siteId, siteState, hour, h.hi, h.lo)
      for (const id of matched) if (r.catalog.goals.has(id)) state.recordConversion(id, h.hi, h.lo, day, e.ts, undefined, hour)
      // the same conditions and the same event identity (its offset) as the live fold
      if (e.revenue !== undefined && currencies) state.recordRevenue(e, h.hi, h.lo, day, record.offset, matched.filter((id) => r.catalog.goals.has(id)), currencies)
    }
    const next = below[below.length - 1].offset + 1
    if (Math.floor(next / PROGRESS_EVERY) > Math.floor(from / PROGRESS_EVERY)) {
      r.onProgress?.('replaying', { site: r.siteId, partition: state.partition, offset: next, until: r.until })
    }
    from = next
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  return true
}
