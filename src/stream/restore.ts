/**
 * A partition task's restore (Kafka Streams' state restoration): the changelog first when another
 * node wrote it since this store did, then the local store, resumed no earlier than the retained
 * log's start; and the filter of the sessions the store holds.
 */
import type { EventLog } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import { todayOf } from '../goals/index.js'
import type { PartitionMeta, StateStore } from '../store/index.js'
import { ScalableBloomFilter } from '../sketch/index.js'
import { PartitionState } from './partition-state.js'
import type { Changelog } from './changelog.js'

export interface RestoreContext {
  log: EventLog
  topic: string
  store: StateStore
  changelog?: Changelog
  exactThreshold: number
  retentionDays: number
  /** the goals' sites and their zones: a settled day's set leaves memory as soon as it is restored */
  catalog?: Catalog
  onProgress?(message: string, fields: Record<string, unknown>): void
}

export interface Restored {
  state: PartitionState
  meta: PartitionMeta
  /** the log's end at assignment: below it the task is catching up */
  end: number
  /** the sessions that may have a stored summary */
  stored: ScalableBloomFilter
}

export async function restorePartition(partition: number, c: RestoreContext): Promise<Restored> {
  const { log, topic, store } = c
  if (c.changelog) {
    await c.changelog.restore(partition, store, (records) => {
      if (records % 100_000 < 5000) c.onProgress?.('restoring from the changelog', { partition, records })
    })
  }
  const state = new PartitionState(partition, c.exactThreshold)
  state.settled.reader = (goal, day) => store.readGoalDay(partition, goal, day)
  // a day before yesterday in its site's zone is settled (a goal not known yet keeps its days until the pass)
  const now = Date.now()
  const settledFrom = new Map<string, number>()
  const settled = (goal: string, day: number): boolean => {
    let from = settledFrom.get(goal)
    if (from === undefined) {
      const site = c.catalog?.sites.get(c.catalog.goals.get(goal)?.site_id ?? '')
      settledFrom.set(goal, (from = site === undefined ? -Infinity : todayOf(site.timezone, now) - 1))
    }
    return day < from
  }
  const meta = await store.loadPartition(state, settled)
  // a snapshot older than the retained log resumes at the log's start
  state.offset = Math.max(state.offset, await log.beginOffset(topic, partition))
  const end = await log.endOffset(topic, partition)
  return { state, meta, end, stored: await storedFilter(store, partition, c.retentionDays) }
}

/** The filter of a partition's stored sessions, from the store's keys; it grows by layers from then on. */
async function storedFilter(store: StateStore, partition: number, retentionDays: number): Promise<ScalableBloomFilter> {
  const stored: { hi: number; lo: number }[] = []
  for await (const h of store.summaryHashes(partition)) stored.push(h)
  // layers close at least every tenth of the retention, so that they retire on time
  const filter = new ScalableBloomFilter(Math.max(1 << 17, 2 * stored.length), { maxLayerAge: (retentionDays * 86_400_000) / 10 })
  for (const h of stored) filter.add(h.hi, h.lo)
  return filter
}
