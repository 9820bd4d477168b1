import type { EventLog } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { Goal } from '../schema/api.js'
import { eventKey, type LoggedEvent } from '../schema/event.js'
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
  parts: PartitionState[]
  siteId: string
  /** the goals to count; events of other goals and sites are skipped */
  goals: Goal[]
  /** also rebuild the site's per-day session counters */
  counters: boolean
  /** per partition, the first offset the live fold counts: the replay stops below it */
  until: number[]
  stopped(): boolean
  onProgress?(message: string, fields: Record<string, unknown>): void
}

/**
 * Folds the retained log below `until` into one site's goals (and day counters) only: how a new
 * goal counts the past, and how a site's days are rebuilt in a new time zone. Every update is a
 * join, so overlapping the live fold is harmless. Yields between chunks so ingest and queries go on.
 */
export async function replayLog(r: Replay): Promise<void> {
  const index = new GoalIndex()
  for (const g of r.goals) index.add(g)
  const matched: string[] = []
  for (const state of r.parts) {
    const until = r.until[state.partition]!
    let from = await r.log.beginOffset(r.topic, state.partition)
    while (from < until && !r.stopped()) {
      const site = r.catalog.sites.get(r.siteId)
      if (!site) return
      const records = await r.log.read(r.topic, state.partition, from, Math.min(CHUNK, until - from))
      if (records.length === 0) break
      for (const record of records) {
        const e = JSON.parse(record.value.toString()) as LoggedEvent
        if (e.site_id !== r.siteId) continue
        matched.length = 0
        index.matches(e.site_id, e.type, pageOf(e), e.event_name, matched)
        if (matched.length === 0 && !r.counters) continue
        const h = hash64(eventKey(e.site_id, e.session_id))
        const day = dayOf(e.ts, site.timezone)
        if (r.counters) state.countSession(r.siteId, day, h.hi, h.lo)
        for (const id of matched) if (r.catalog.goals.has(id)) state.recordConversion(id, h.hi, h.lo, day, e.ts)
      }
      from = records[records.length - 1]!.offset + 1
      if (from % PROGRESS_EVERY < CHUNK) r.onProgress?.('replaying', { site: r.siteId, partition: state.partition, offset: from, until })
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }
}
