import type { EventLog } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { Goal, SessionSummary } from '../schema/index.js'
import { readEventAt, type EventRecord } from '../log/index.js'
import { hashHi, hashKey, hashLo } from '../sketch/index.js'
import { dayOf, dayTime } from '../goals/index.js'
import { GoalIndex } from './goal-index.js'
import type { PartitionState } from './partition-state.js'
import { linkSessionsAcross } from './link-across.js'
import { pageOf } from './session-summary.js'
import { DIMENSIONS, summaryAttributes } from './session-attributes.js'

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
  /** also rebuild the site's per-day session counters (and its breakdown values', from `summaries`) */
  counters: boolean
  /** the stored summaries of sessions not in memory */
  summaries?(hks: string[]): Promise<(SessionSummary | undefined)[]>
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
  // the replay records without sessions' spans, so it looks for a session in every day of its
  // goals: their settled days come back from the store first, and stay while it runs
  return r.state.settled.holding(async () => {
    await r.state.settled.loadRange(r.goals.map((g) => g.id))
    return replayChunks(r)
  })
}

async function replayChunks(r: Replay): Promise<boolean> {
  const index = new GoalIndex()
  for (const g of r.goals) index.add(g)
  const matched: string[] = []
  const currencies = index.currencies(r.siteId)
  const { state } = r
  // one reader a record of a chunk, kept for the next chunk: reading costs no object a record
  const readers: EventRecord[] = []
  let from = await r.log.beginOffset(r.topic, state.partition)
  while (from < r.until) {
    if (r.stopped()) return false
    const site = r.catalog.sites.get(r.siteId)
    if (!site) return false
    const records = await r.log.read(r.topic, state.partition, from, Math.min(CHUNK, r.until - from))
    const below = records.filter((record) => record.offset < r.until)
    if (below.length === 0) break
    const events = below.map((record, i) => parse(readers, i, record))
    // re-bucketing counts every event of the site and looks its session's attributes up first
    const attributes = r.counters ? await attributesOf(r, events) : undefined
    for (let i = 0; i < below.length; i++) {
      const record = below[i]
      const e = events[i]
      if (e === undefined || e.site_id !== r.siteId) continue
      const count = index.matches(e.site_id, pageOf(e), e, matched)
      if (count === 0 && !r.counters) continue
      const hi = e.hashHi
      const lo = e.hashLo
      const day = dayOf(e.ts, site.timezone)
      const siteState = r.counters ? state.countSession(r.siteId, day, hi, lo) : state.site(r.siteId)
      const hour = state.hourOf(siteState, e.ts, day, site.timezone)
      if (r.counters && hour >= 0) state.countHour(r.siteId, siteState, hour, hi, lo)
      const values = attributes?.get(hashKey(hi, lo))
      if (values) state.countValues(r.siteId, siteState, day, values, hi, lo)
      const time = dayTime(e.ts, day)
      for (let m = 0; m < count; m++) if (r.catalog.goals.has(matched[m])) state.recordConversionAt(matched[m], hi, lo, day, time, undefined, hour)
      // the same conditions and the same event identity (its offset) as the live fold
      if (e.revenue !== undefined && currencies) {
        state.recordRevenue(e, hi, lo, day, record.offset, matched.slice(0, count).filter((id) => r.catalog.goals.has(id)), currencies)
      }
    }
    const next = below[below.length - 1].offset + 1
    if (Math.floor(next / PROGRESS_EVERY) > Math.floor(from / PROGRESS_EVERY)) {
      r.onProgress?.('replaying', { site: r.siteId, partition: state.partition, offset: next, until: r.until })
    }
    from = next
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  // the replay folds without sessions' spans: which sessions converted the site's goals on several
  // days is found from the day sets now, before the replay counts as done
  return linkSessionsAcross(state, r.catalog.goalsOf(r.siteId).map((g) => g.id), r.stopped)
}

/** a record the live fold set aside as unreadable is skipped here too */
function parse(readers: EventRecord[], i: number, record: { value: Buffer }): EventRecord | undefined {
  try {
    return readEventAt(readers, i, record.value)
  } catch {
    return undefined
  }
}

/**
 * The attributes of the sessions of the site's events: from the
 * session table, else from the store. Read after the store's answer, in one synchronous pass, so
 * the table cannot change between.
 */
async function attributesOf(r: Replay, events: (EventRecord | undefined)[]): Promise<Map<string, (string | null)[]>> {
  const table = r.state.summaries
  const hks = new Set<string>()
  for (const e of events) if (e !== undefined && e.site_id === r.siteId) hks.add(hashKey(e.hashHi, e.hashLo))
  const cold = [...hks].filter((hk) => !table.has(hk))
  const stored = cold.length && r.summaries ? await r.summaries(cold) : []
  const out = new Map<string, (string | null)[]>()
  cold.forEach((hk, i) => {
    const s = stored[i]
    if (s) out.set(hk, summaryAttributes(s))
  })
  for (const hk of hks) {
    const slot = table.slotOf(hashHi(hk), hashLo(hk))
    if (slot >= 0) out.set(hk, table.attributes(slot, new Array<string | null>(DIMENSIONS)))
  }
  return out
}
