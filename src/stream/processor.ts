import type { EventLog, LogRecord, Subscription } from '../log/index.js'
import type { Catalog, CatalogEvent } from '../catalog/index.js'
import type { Goal, Site } from '../schema/api.js'
import { eventKey, type LoggedEvent } from '../schema/event.js'
import type { StateStore, ReplayRecord } from '../store/index.js'
import { hash64 } from '../sketch/index.js'
import { todayOf } from '../goals/index.js'
import { GoalIndex } from './goal-index.js'
import { PartitionState, hashKey, type Dirty } from './partition-state.js'
import type { SessionSummary } from './session-summary.js'
import { replayLog } from './replay.js'

export interface ProcessorOptions {
  log: EventLog
  store: StateStore
  catalog: Catalog
  topic: string
  exactThreshold: number
  snapshotIntervalMs: number
  retentionDays: number
  onError(err: unknown, where: string): void
  /** progress of long work: restores and replays */
  onProgress?(message: string, fields: Record<string, unknown>): void
}

/** Summaries of sessions idle this long leave memory (they stay in the store). */
const HOT_SESSION_MS = 2 * 60 * 60 * 1000
const RETENTION_EVERY_MS = 60 * 60 * 1000
/** a full pass over stored summaries: once a day is plenty for a 90-day retention */
const SUMMARY_PRUNE_EVERY_MS = 24 * 60 * 60 * 1000


/**
 * Folds the events topic into per-partition state, restores it from the last snapshot, snapshots
 * it on a schedule, and backfills new goals from the retained log (goals are retroactive).
 */
export class StreamProcessor {
  readonly parts: PartitionState[] = []
  readonly #o: ProcessorOptions
  readonly #index = new GoalIndex()
  readonly #subs: Subscription[] = []
  /** running replays by record id (`goal:<id>`, `site:<id>`) */
  readonly #replays = new Map<string, Promise<void>>()
  readonly #doneReplays: ReplayRecord[] = []
  /** store deletions a snapshot must not overtake */
  #clearing: Promise<void> | null = null
  readonly #timers: NodeJS.Timeout[] = []
  /** store writes outside snapshots, awaited before the store may close */
  readonly #writes = new Set<Promise<unknown>>()
  #snapshotting: Promise<void> | null = null
  #summariesPrunedAt = 0
  #ready = false
  #stopped = false
  eventsFolded = 0

  constructor(opts: ProcessorOptions) {
    this.#o = opts
  }

  get ready(): boolean {
    return this.#ready
  }

  get goals(): GoalIndex {
    return this.#index
  }

  async start(): Promise<void> {
    const { log, store, catalog, topic } = this.#o
    const n = log.partitionsOf(topic)
    for (let p = 0; p < n; p++) {
      const state = new PartitionState(p, this.#o.exactThreshold)
      await store.loadPartition(state)
      // a snapshot older than the retained log resumes at the log's start
      state.offset = Math.max(state.offset, await log.beginOffset(topic, p))
      this.parts.push(state)
      this.#o.onProgress?.('partition restored from snapshot', { partition: p, offset: state.offset, goals: state.goals.size, sites: state.sites.size })
    }
    for (const g of catalog.goals.values()) this.#index.add(g)
    // a goal deleted just before a crash may have left state behind
    for (const s of this.parts) {
      for (const id of s.goals.keys()) {
        if (!catalog.goals.has(id)) {
          s.dropGoal(id)
          this.#track(store.deleteGoal(id, n))
        }
      }
    }
    catalog.onChange((e) => this.#onCatalog(e))

    const ends = await Promise.all(this.parts.map((s) => log.endOffset(topic, s.partition)))
    const caughtUp = this.parts.map((s, p) => this.#subscribeFrom(s, ends[p]!))

    const records = await store.replays()
    const done = new Set(records.filter((r) => r.done).map((r) => r.id))
    const pending = [...catalog.goals.values()].filter((g) => !done.has(`goal:${g.id}`)).map((g) => this.#backfill(g))
    for (const r of records) {
      const site = r.id.startsWith('site:') && !r.done ? catalog.sites.get(r.id.slice(5)) : undefined
      if (site) pending.push(this.#rebucket(site))
    }

    const behind = ends.reduce((n, end, p) => n + Math.max(0, end - this.parts[p]!.offset), 0)
    this.#o.onProgress?.('replaying the log tail', { records: behind, replays: pending.length })
    await Promise.all([...caughtUp, ...pending])
    this.#ready = true
    this.#timers.push(setInterval(() => void this.snapshot().catch((err) => this.#o.onError(err, 'snapshot')), this.#o.snapshotIntervalMs))
    this.#timers.push(setInterval(() => void this.enforceRetention().catch((err) => this.#o.onError(err, 'retention')), RETENTION_EVERY_MS))
    for (const t of this.#timers) t.unref()
    await this.enforceRetention()
  }

  /** Subscribes one partition; resolves once it has folded everything below `end`. */
  #subscribeFrom(state: PartitionState, end: number): Promise<void> {
    let caughtUp!: () => void
    const reached = new Promise<void>((resolve) => (caughtUp = resolve))
    if (state.offset >= end) caughtUp()
    const sub = this.#o.log.subscribe(this.#o.topic, state.partition, state.offset, async (records) => {
      try {
        await this.#foldBatch(state, records)
      } catch (err) {
        this.#o.onError(err, `partition ${state.partition}`)
        throw err
      }
      if (state.offset >= end) caughtUp()
    })
    this.#subs.push(sub)
    return reached
  }

  async #foldBatch(state: PartitionState, records: LogRecord[]): Promise<void> {
    const events: LoggedEvent[] = new Array(records.length)
    const hashes: { hi: number; lo: number; hk: string }[] = new Array(records.length)
    const missing: string[] = []
    const asked = new Set<string>()
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!
      const e = (r.decoded ?? JSON.parse(r.value.toString())) as LoggedEvent
      const h = hash64(eventKey(e.site_id, e.session_id))
      const hk = hashKey(h.hi, h.lo)
      events[i] = e
      hashes[i] = { hi: h.hi, lo: h.lo, hk }
      if (!state.summaries.has(hk) && !asked.has(hk)) {
        asked.add(hk)
        missing.push(hk)
      }
    }
    if (missing.length) {
      const found = await this.#o.store.getSummaries(state.partition, missing)
      found.forEach((s, i) => {
        if (s && !state.summaries.has(missing[i]!)) state.summaries.set(missing[i]!, s)
      })
    }
    const sites = this.#o.catalog.sites
    for (let i = 0; i < records.length; i++) {
      const e = events[i]!
      const site = sites.get(e.site_id)
      if (site) {
        const h = hashes[i]!
        state.fold(e, h.hi, h.lo, h.hk, site, this.#index)
      }
    }
    state.offset = records[records.length - 1]!.offset + 1
    this.eventsFolded += records.length
  }

  #onCatalog(e: CatalogEvent): void {
    if (e.kind === 'site') {
      if (e.before && e.after && e.before.timezone !== e.after.timezone && this.#ready) void this.#rebucket(e.after)
      return
    }
    if (e.after) {
      const isNew = !e.before
      this.#index.add(e.after)
      if (isNew) void this.#backfill(e.after)
    } else if (e.before) {
      const goal = e.before
      this.#index.remove(goal.id, goal.site_id)
      for (const s of this.parts) s.dropGoal(goal.id)
      this.#track(this.#o.store.deleteGoal(goal.id, this.parts.length).catch((err) => this.#o.onError(err, 'delete goal')))
    }
  }

  #track(p: Promise<unknown>): void {
    this.#writes.add(p)
    void p.finally(() => this.#writes.delete(p))
  }

  /** Resolves once the goal's backfill is done, or after `timeoutMs` (the backfill goes on). */
  whenBackfilled(goalId: string, timeoutMs: number): Promise<boolean> {
    const job = this.#replays.get(`goal:${goalId}`)
    if (!job) return Promise.resolve(true)
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs)
      job.then(() => (clearTimeout(t), resolve(true)), () => (clearTimeout(t), resolve(false)))
    })
  }

  /**
   * Counts a goal over the retained log below the offsets the live fold had reached when the goal
   * appeared; the live fold counts everything after. Both are joins, so their overlap is harmless.
   */
  #backfill(goal: Goal): Promise<void> {
    const until = this.parts.map((s) => s.offset)
    return this.#run(`goal:${goal.id}`, async () => {
      await this.#replay(goal.site_id, [goal], false, until)
      if (!this.#o.catalog.goals.has(goal.id)) return false
      return true
    }, until)
  }

  /**
   * Re-buckets a site whose time zone changed: its day counters and its goals' conversions are
   * dropped at once (so no day mixes two zones) and rebuilt from the retained log, while the live
   * fold already uses the new zone. A marker written first makes a crash midway rerun it.
   */
  #rebucket(site: Site): Promise<void> {
    const { store, catalog } = this.#o
    const goals = catalog.goalsOf(site.site_id)
    const ids = goals.map((g) => g.id)
    const until = this.parts.map((s) => s.offset)
    for (const s of this.parts) s.clearSite(site.site_id, ids)
    const id = `site:${site.site_id}`
    const cleared = store
      .putReplay({ id, until, done: false })
      .then(() => store.clearSite(site.site_id, ids, this.parts.length))
    this.#clearing = Promise.all([this.#clearing, cleared]).then(() => {})
    return this.#run(id, async () => {
      await cleared
      await this.#replay(site.site_id, goals, true, until)
      return true
    }, until)
  }

  #run(id: string, work: () => Promise<boolean>, until: number[]): Promise<void> {
    const started = Date.now()
    const records = until.reduce((a, b) => a + b, 0)
    this.#o.onProgress?.('replay started', { replay: id, records })
    const job = work()
      .then((completed) => {
        if (completed && !this.#stopped) this.#doneReplays.push({ id, until, done: true })
        this.#o.onProgress?.(completed ? 'replay done' : 'replay abandoned', { replay: id, records, ms: Date.now() - started })
      })
      .finally(() => this.#replays.delete(id))
    job.catch((err) => this.#o.onError(err, `replay ${id}`))
    this.#replays.set(id, job)
    return job
  }

  #replay(siteId: string, goals: Goal[], counters: boolean, until: number[]): Promise<void> {
    const { log, topic, catalog, onProgress } = this.#o
    return replayLog({ log, topic, catalog, parts: this.parts, siteId, goals, counters, until, stopped: () => this.#stopped, onProgress })
  }

  /** Writes every partition's changes and offset in one atomic batch. */
  snapshot(): Promise<void> {
    if (this.#snapshotting) return this.#snapshotting
    if (this.#clearing) {
      const clearing = this.#clearing
      this.#clearing = null
      return clearing.then(() => this.snapshot())
    }
    const taken: { state: PartitionState; dirty: Dirty }[] = this.parts.map((state) => ({ state, dirty: state.takeDirty() }))
    const replays = this.#doneReplays.splice(0)
    let ops
    try {
      ops = this.#o.store.snapshotOps(taken, replays)
    } catch (err) {
      this.#putBack(taken, replays)
      return Promise.reject(err)
    }
    this.#snapshotting = this.#o.store
      .write(ops)
      .then(() => {
        const cutoff = Date.now() - HOT_SESSION_MS
        for (const s of this.parts) s.evictSummaries(cutoff)
      })
      .catch((err) => {
        this.#putBack(taken, replays)
        throw err
      })
      .finally(() => (this.#snapshotting = null))
    return this.#snapshotting
  }

  #putBack(taken: { state: PartitionState; dirty: Dirty }[], replays: ReplayRecord[]): void {
    for (const { state, dirty } of taken) state.restoreDirty(dirty)
    this.#doneReplays.push(...replays)
  }

  /** Drops day buckets that fell out of the retention window, in memory and in the store. */
  async enforceRetention(now = Date.now()): Promise<void> {
    const { catalog, store, retentionDays } = this.#o
    if (now - this.#summariesPrunedAt >= SUMMARY_PRUNE_EVERY_MS) {
      this.#summariesPrunedAt = now
      const cutoff = now - retentionDays * 86_400_000
      for (const state of this.parts) {
        const pruned = await store.pruneSummaries(state.partition, cutoff)
        if (pruned) this.#o.onProgress?.('pruned session summaries past retention', { partition: state.partition, pruned })
      }
    }
    for (const site of catalog.sites.values()) {
      const minDay = todayOf(site.timezone, now) - retentionDays + 1
      const goalIds = catalog.goalsOf(site.site_id).map((g) => g.id)
      for (const state of this.parts) {
        const dropped = state.dropBefore(site.site_id, goalIds, minDay)
        await store.deleteDays(state.partition, site.site_id, dropped.counters, dropped.goalDays)
      }
    }
  }

  /** Summaries by hash key: from memory when hot, else from the store. */
  async summaries(partition: number, hks: string[]): Promise<(SessionSummary | undefined)[]> {
    const state = this.parts[partition]!
    const out: (SessionSummary | undefined)[] = hks.map((hk) => state.summaries.get(hk))
    const cold = hks.filter((_, i) => out[i] === undefined)
    if (cold.length) {
      const loaded = await this.#o.store.getSummaries(partition, cold)
      let j = 0
      for (let i = 0; i < out.length; i++) if (out[i] === undefined) out[i] = loaded[j++]
    }
    return out
  }

  /** how far each partition's fold is behind the log's end */
  async lag(): Promise<number[]> {
    return Promise.all(this.parts.map(async (s) => (await this.#o.log.endOffset(this.#o.topic, s.partition)) - s.offset))
  }

  async stop(): Promise<void> {
    this.#stopped = true
    for (const t of this.#timers) clearInterval(t)
    await Promise.all(this.#subs.map((s) => s.close()))
    await Promise.allSettled([...this.#replays.values(), ...this.#writes, this.#clearing])
    if (this.#snapshotting) await this.#snapshotting.catch(() => {})
    await this.snapshot()
  }
}
