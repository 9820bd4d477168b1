/**
 * Rebuilds partition state from the events topic alone, into an empty store: what an operator runs
 * to recreate a node's state elsewhere, to check that a replay equals the live fold, or to measure
 * how fast the fold goes. Every partition is read from its earliest retained record (or from a
 * time on) to the end it had when the rebuild started.
 */
import type { EventLog, LogRecord } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { StateStore } from '../store/index.js'
import { GoalIndex } from './goal-index.js'
import { PartitionTask } from './partition-task.js'

/**
 * Changed summaries that start a rebuild's snapshot: a session's events span tens of thousands of
 * others, and at the live fold's bound (8 192) most summaries were written two or three times.
 * A batch at this bound is ~20 MB.
 */
const REBUILD_SNAPSHOT_AT_DIRTY = 65_536

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
  const chunk = o.chunk ?? 5000
  let done = 0
  let folded = 0
  let closing = Promise.resolve()
  for (const { p, end } of ranges) {
    const { task } = await PartitionTask.open(p, {
      log: o.log, topic: o.topic, store: o.store, catalog: o.catalog, goals,
      exactThreshold: o.exactThreshold, retentionDays: o.retentionDays, maxHotSessions: () => Infinity, snapshotAtDirty: REBUILD_SNAPSHOT_AT_DIRTY,
      onError: (err) => {
        throw err
      },
    })
    const readFrom = (from: number): Promise<LogRecord[]> | undefined => {
      if (from >= end) return undefined
      const reading = o.log.read(o.topic, p, from, chunk)
      reading.catch(() => undefined) // awaited below; a fold that throws first must not leave it unhandled
      return reading
    }
    let reading = readFrom(task.state.offset)
    while (reading !== undefined) {
      const got = await reading
      const records = got.length > 0 && got[got.length - 1].offset >= end ? got.filter((r) => r.offset < end) : got
      if (records.length === 0) break
      // the next chunk is read while this one folds: the broker (or the disk) works beside the fold,
      // once the request has left — the fold holds the thread until it is done
      reading = readFrom(records[records.length - 1].offset + 1)
      await new Promise<void>((resolve) => setImmediate(resolve))
      const wanted = o.since === undefined ? records : records.filter((r) => r.timestamp >= o.since!)
      if (wanted.length) await task.fold(wanted)
      task.state.offset = records[records.length - 1].offset + 1
      done += records.length
      folded += wanted.length
      o.onProgress?.(done, total)
    }
    // the live fold above counted every goal known now: no backfill is owed for them
    task.markCounted([...o.catalog.goals.keys()])
    // a partition's last snapshot is committed by the store's own thread while the next one folds;
    // one at a time, so no more than two partitions' state is held at once
    await closing
    closing = task.close()
    closing.catch(() => undefined) // awaited before the next close or at the end
  }
  await closing
  return { records: done, folded, ms: performance.now() - started, partitions: n }
}
