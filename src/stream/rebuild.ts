/**
 * Rebuilds partition state from the events topic alone, into an empty store: what an operator runs
 * to recreate a node's state elsewhere, to check that a replay equals the live fold, or to measure
 * how fast the fold goes. Every partition is read from its earliest retained record (or from a
 * time on) to the end it had when the rebuild started.
 */
import type { EventLog } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { StateStore } from '../store/index.js'
import { GoalIndex } from './goal-index.js'
import { PartitionTask } from './partition-task.js'

export interface RebuildOptions {
  log: EventLog
  topic: string
  catalog: Catalog
  store: StateStore
  exactThreshold: number
  retentionDays: number
  /** only records stamped at or after this time (epoch ms) are folded */
  since?: number
  /** records per read */
  chunk?: number
  /** called after each chunk with the records read so far and the total to read */
  onProgress?(read: number, total: number): void
}

export interface RebuildResult {
  records: number
  folded: number
  ms: number
  partitions: number
}

export async function rebuild(o: RebuildOptions): Promise<RebuildResult> {
  const started = performance.now()
  const goals = new GoalIndex()
  for (const g of o.catalog.goals.values()) goals.add(g)
  const n = o.log.partitionsOf(o.topic)
  const ranges = await Promise.all(Array.from({ length: n }, async (_, p) => ({
    p, begin: await o.log.beginOffset(o.topic, p), end: await o.log.endOffset(o.topic, p),
  })))
  const total = ranges.reduce((sum, r) => sum + Math.max(0, r.end - r.begin), 0)
  let read = 0
  let folded = 0
  for (const { p, end } of ranges) {
    const { task } = await PartitionTask.open(p, {
      log: o.log, topic: o.topic, store: o.store, catalog: o.catalog, goals,
      exactThreshold: o.exactThreshold, retentionDays: o.retentionDays, maxHotSessions: () => Infinity,
      onError: (err) => {
        throw err
      },
    })
    let from = task.state.offset
    while (from < end) {
      const records = (await o.log.read(o.topic, p, from, o.chunk ?? 5000)).filter((r) => r.offset < end)
      if (records.length === 0) break
      const wanted = o.since === undefined ? records : records.filter((r) => r.timestamp >= o.since!)
      if (wanted.length) await task.fold(wanted)
      task.state.offset = records[records.length - 1]!.offset + 1
      read += records.length
      folded += wanted.length
      from = task.state.offset
      o.onProgress?.(read, total)
    }
    // the live fold above counted every goal known now: no backfill is owed for them
    task.markCounted([...o.catalog.goals.keys()])
    await task.close()
  }
  return { records: read, folded, ms: performance.now() - started, partitions: n }
}
