/**
 * One partition of the events topic, owned by this node for as long as the group says so (Kafka
 * Streams' stream task): it restores the partition's state, folds its records, snapshots its
 * changes to the local store (and first to the changelog, when there is one), backfills new goals
 * and re-buckets sites over the partition's own retained log, and snapshots once more when the
 * partition leaves.
 */
import type { EventLog, LogRecord } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { Goal, Site } from '../schema/api.js'
import { eventKey, type LoggedEvent } from '../schema/event.js'
import type { Op, PartitionMeta, ReplayRecord, StateStore } from '../store/index.js'
import { ScalableBloomFilter, hash64 } from '../sketch/index.js'
import { todayOf } from '../goals/index.js'
import type { GoalIndex } from './goal-index.js'
import { PartitionState, hashKey } from './partition-state.js'
import type { Changelog } from './changelog.js'
import { replayLog } from './replay.js'

export interface TaskContext {
  log: EventLog
  topic: string
  store: StateStore
  catalog: Catalog
  goals: GoalIndex
  changelog?: Changelog
  exactThreshold: number
  retentionDays: number
  /** most session summaries this task may hold in memory */
  maxHotSessions(): number
  onError(err: unknown, where: string): void
  onProgress?(message: string, fields: Record<string, unknown>): void
  /** a record that cannot be folded was set aside */
  onDeadLetter?(partition: number, offset: number, err: unknown): void
  /** events of a site that is still unknown after the config caught up */
  onUnknownSite?(partition: number, siteId: string): void
}

/** Summaries of sessions idle this long leave memory (they stay in the store). */
const HOT_SESSION_MS = 2 * 60 * 60 * 1000
/** a full pass over stored summaries: once a day is plenty for a 90-day retention */
const SUMMARY_PRUNE_EVERY_MS = 24 * 60 * 60 * 1000

export class PartitionTask {
  readonly state: PartitionState
  readonly #c: TaskContext
  /** the log's end when the partition was assigned: below it the task is catching up */
  readonly #end: number
  /** the time zone each site's days are bucketed in, as stored */
  readonly #zones: Map<string, string>
  readonly #dirtyZones = new Map<string, string>()
  readonly #replays = new Map<string, Promise<void>>()
  #doneReplays: ReplayRecord[] = []
  /** writes outside snapshots (deletions, replay markers), in order; a snapshot waits for them */
  #writes: Promise<void> = Promise.resolve()
  #snapshotting: Promise<void> | null = null
  #summariesPrunedAt = 0
  #stopped = false
  /**
   * Sessions that may have a stored summary. A new session (most sessions, in real traffic) is
   * certainly not in the store, and this answers so without a LevelDB read (8.6 µs each, measured).
   * Built from the store's keys when the partition is restored; every session folded since is added.
   */
  readonly #stored: ScalableBloomFilter
  /** the error a fold keeps failing with, while it retries; undefined when healthy */
  stalled: unknown = undefined

  private constructor(state: PartitionState, c: TaskContext, end: number, meta: PartitionMeta, stored: ScalableBloomFilter) {
    this.state = state
    this.#stored = stored
    this.#c = c
    this.#end = end
    this.#zones = meta.zones
  }

  /** Restores a partition: the changelog (when newer than the local store), then the store. */
  static async open(partition: number, c: TaskContext): Promise<{ task: PartitionTask; meta: PartitionMeta }> {
    const { log, topic, store, catalog } = c
    if (c.changelog) {
      await c.changelog.restore(partition, store, (records) => {
        if (records % 100_000 < 5000) c.onProgress?.('restoring from the changelog', { partition, records })
      })
    }
    const state = new PartitionState(partition, c.exactThreshold)
    const meta = await store.loadPartition(state)
    // a snapshot older than the retained log resumes at the log's start
    state.offset = Math.max(state.offset, await log.beginOffset(topic, partition))
    const task = new PartitionTask(state, c, await log.endOffset(topic, partition), meta, await storedFilter(store, partition))
    // goals deleted while the partition was elsewhere or the node was down
    for (const id of [...state.goals.keys()]) if (!catalog.goals.has(id)) task.dropGoal(id)
    c.onProgress?.('partition restored', { partition, offset: state.offset, goals: state.goals.size, sites: state.sites.size })
    return { task, meta }
  }

  get partition(): number {
    return this.state.partition
  }

  /** folded everything that was in the log when the partition was assigned */
  get caughtUp(): boolean {
    return this.state.offset >= this.#end
  }

  /**
   * Offsets are not dense (Kafka's commit markers and aborted records take offsets no consumer
   * sees), so the last record folded may sit below the end seen at assignment for good: when no
   * record is left below that end, the task has caught up, and it resumes from there.
   */
  async probeCaughtUp(): Promise<boolean> {
    if (this.caughtUp) return true
    const from = this.state.offset
    const next = await this.#c.log.read(this.#c.topic, this.partition, from, 1)
    if ((next.length === 0 || next[0]!.offset >= this.#end) && this.state.offset === from) this.state.offset = this.#end
    return this.caughtUp
  }

  get replaying(): number {
    return this.#replays.size
  }

  /**
   * Starts what the restored state still owes: backfills of goals it has not counted yet and
   * re-bucketing of sites whose time zone changed while the partition was not folding here.
   */
  resume(meta: PartitionMeta): void {
    const { catalog } = this.#c
    for (const goal of catalog.goals.values()) if (meta.replays.get(`goal:${goal.id}`)?.done !== true) this.backfill(goal)
    const rebucket = new Set<string>()
    for (const r of meta.replays.values()) if (r.id.startsWith('site:') && !r.done) rebucket.add(r.id.slice(5))
    for (const [siteId, zone] of this.#zones) if (catalog.sites.get(siteId) && catalog.sites.get(siteId)!.timezone !== zone) rebucket.add(siteId)
    for (const siteId of rebucket) {
      const site = catalog.sites.get(siteId)
      if (site) this.rebucket(site)
    }
  }

  /**
   * Folds consecutive records. Throws only for outside failures worth retrying (the store); a
   * record that cannot be read or folded is set aside with its error and the partition goes on.
   */
  async fold(records: LogRecord[]): Promise<void> {
    const { state } = this
    const { catalog, store } = this.#c
    const events: (LoggedEvent | undefined)[] = new Array(records.length)
    const hashes: { hi: number; lo: number }[] = new Array(records.length)
    const bad: { record: LogRecord; err: unknown }[] = []
    const missing: string[] = []
    const asked = new Set<string>()
    let unknownSite = false
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!
      try {
        const e = (r.decoded ?? JSON.parse(r.value.toString())) as LoggedEvent
        const h = hash64(eventKey(e.site_id, e.session_id))
        events[i] = e
        hashes[i] = h
        if (state.summaries.slotOf(h.hi, h.lo) < 0) {
          const hk = hashKey(h.hi, h.lo)
          if (!asked.has(hk)) {
            asked.add(hk)
            if (this.#stored.has(h.hi, h.lo)) missing.push(hk)
            else this.#stored.add(h.hi, h.lo)
          }
        }
        if (!catalog.sites.has(e.site_id)) unknownSite = true
      } catch (err) {
        bad.push({ record: r, err })
      }
    }
    if (missing.length) {
      const found = await store.getSummaries(state.partition, missing)
      found.forEach((s, i) => {
        if (s && !state.summaries.has(missing[i]!)) state.summaries.set(missing[i]!, s)
      })
    }
    // a site created on another node may not have reached this node's config view yet
    if (unknownSite) await catalog.sync()
    const sites = catalog.sites
    for (let i = 0; i < records.length; i++) {
      const e = events[i]
      if (!e) continue
      const site = sites.get(e.site_id)
      if (!site) {
        this.#c.onUnknownSite?.(state.partition, e.site_id)
        continue
      }
      const h = hashes[i]!
      try {
        state.fold(e, h.hi, h.lo, site, this.#c.goals)
      } catch (err) {
        bad.push({ record: records[i]!, err })
      }
    }
    for (const { record, err } of bad) {
      await store.putDeadLetter(state.partition, record.offset, record.value, err instanceof Error ? err.message : String(err))
      this.#c.onDeadLetter?.(state.partition, record.offset, err)
    }
    state.offset = records[records.length - 1]!.offset + 1
    // over the cap with only dirty summaries left: write them now so they can leave memory
    if (state.evictOver(this.#c.maxHotSessions()) > 0) {
      await this.snapshot()
      state.evictOver(this.#c.maxHotSessions())
    }
  }

  /** Counts a goal over this partition's retained log below where the live fold stands now. */
  backfill(goal: Goal): void {
    const until = this.state.offset
    this.#run(`goal:${goal.id}`, until, async () => {
      const done = await this.#replay(goal.site_id, [goal], false, until)
      return done && this.#c.catalog.goals.has(goal.id)
    })
  }

  /** Records that these goals are counted up to the current offset, as a finished backfill would. */
  markCounted(goalIds: string[]): void {
    for (const id of goalIds) this.#doneReplays.push({ id: `goal:${id}`, until: this.state.offset, done: true })
  }

  /** This task's running backfill of the goal, if one runs. */
  backfilling(goalId: string): Promise<void> | undefined {
    return this.#replays.get(`goal:${goalId}`)
  }

  /**
   * Re-buckets a site whose time zone changed: its day counters and its goals' conversions are
   * dropped at once (so no day mixes two zones) and rebuilt from the partition's log, while the live
   * fold already uses the new zone. A marker written first makes a crash midway rerun it.
   */
  rebucket(site: Site): void {
    const { store, catalog } = this.#c
    const p = this.state.partition
    const ids = catalog.goalsOf(site.site_id).map((g) => g.id)
    const until = this.state.offset
    this.state.clearSite(site.site_id, ids)
    this.#zones.set(site.site_id, site.timezone)
    this.#dirtyZones.set(site.site_id, site.timezone)
    const id = `site:${site.site_id}`
    const cleared = this.#write(async () => [store.replayOp(p, { id, until, done: false }), ...(await store.clearSiteOps(site.site_id, ids, p))])
    this.#run(id, until, async () => {
      await cleared
      return this.#replay(site.site_id, catalog.goalsOf(site.site_id), true, until)
    })
  }

  dropGoal(goalId: string): void {
    this.state.dropGoal(goalId)
    void this.#write(() => this.#c.store.deleteGoalOps(goalId, this.state.partition)).catch((err) => this.#c.onError(err, `partition ${this.partition}: delete goal`))
  }

  #replay(siteId: string, goals: Goal[], counters: boolean, until: number): Promise<boolean> {
    const { log, topic, catalog, onProgress } = this.#c
    return replayLog({ log, topic, catalog, state: this.state, siteId, goals, counters, until, stopped: () => this.#stopped, onProgress })
  }

  #run(id: string, until: number, work: () => Promise<boolean>): void {
    const started = Date.now()
    const fields = { replay: id, partition: this.partition, until }
    this.#c.onProgress?.('replay started', fields)
    const previous = this.#replays.get(id) ?? Promise.resolve()
    const job = previous
      .then(work)
      .then((completed) => {
        if (completed && !this.#stopped) this.#doneReplays.push({ id, until, done: true })
        this.#c.onProgress?.(completed ? 'replay done' : 'replay abandoned', { ...fields, ms: Date.now() - started })
      })
      .catch((err) => this.#c.onError(err, `partition ${this.partition}: replay ${id}`))
      .finally(() => {
        if (this.#replays.get(id) === job) this.#replays.delete(id)
      })
    this.#replays.set(id, job)
  }

  /**
   * Runs a store write outside a snapshot, after the previous ones and after a snapshot under way
   * (deletions list the keys stored when they run: a snapshot committing after that could bring
   * back a day just deleted); the changelog gets it first.
   */
  #write(ops: () => Promise<Op[]>): Promise<void> {
    const before = Promise.all([this.#writes, this.#snapshotting]).catch(() => undefined)
    const next = before.then(async () => this.#persist(await ops()))
    this.#writes = next
    return next
  }

  async #persist(ops: Op[]): Promise<void> {
    if (ops.length === 0) return
    const { changelog, store } = this.#c
    if (changelog) {
      const end = await changelog.write(this.partition, ops)
      ops.push(store.changelogEndOp(this.partition, end))
    }
    await store.write(ops)
  }

  /** Writes the partition's changes and its offset in one atomic batch. */
  snapshot(): Promise<void> {
    this.#snapshotting ??= this.#snapshot().finally(() => (this.#snapshotting = null))
    return this.#snapshotting
  }

  async #snapshot(): Promise<void> {
    const { state } = this
    const { store, catalog } = this.#c
    await this.#writes.catch(() => undefined)
    const dirty = state.takeDirty()
    const replays = this.#doneReplays.splice(0)
    for (const siteId of dirty.counters.keys()) {
      const tz = catalog.sites.get(siteId)?.timezone
      if (tz && !this.#zones.has(siteId)) {
        this.#zones.set(siteId, tz)
        this.#dirtyZones.set(siteId, tz)
      }
    }
    const zones = new Map(this.#dirtyZones)
    this.#dirtyZones.clear()
    try {
      if (this.#c.changelog) {
        const ops: Op[] = []
        await store.encodeSnapshot(state, dirty, replays, zones, (op) => ops.push(op))
        await this.#persist(ops)
      } else {
        const batch = store.openBatch()
        try {
          await store.encodeSnapshot(state, dirty, replays, zones, batch.add, true)
          await batch.commit()
        } catch (err) {
          await batch.discard().catch(() => undefined)
          throw err
        }
      }
    } catch (err) {
      state.restoreDirty(dirty)
      this.#doneReplays.push(...replays)
      for (const [site, tz] of zones) if (!this.#dirtyZones.has(site)) this.#dirtyZones.set(site, tz)
      throw err
    } finally {
      state.written(dirty)
    }
    state.evictSummaries(Date.now() - HOT_SESSION_MS)
  }

  /** Drops day buckets that fell out of the retention window, in memory and in the store. */
  async enforceRetention(now = Date.now()): Promise<void> {
    const { catalog, store, retentionDays, changelog } = this.#c
    const p = this.partition
    if (now - this.#summariesPrunedAt >= SUMMARY_PRUNE_EVERY_MS) {
      this.#summariesPrunedAt = now
      const pruned = await store.pruneSummaries(p, now - retentionDays * 86_400_000)
      if (pruned.length && changelog) await changelog.write(p, pruned)
      if (pruned.length) this.#c.onProgress?.('pruned session summaries past retention', { partition: p, pruned: pruned.length })
    }
    for (const site of catalog.sites.values()) {
      const minDay = todayOf(site.timezone, now) - retentionDays + 1
      const dropped = this.state.dropBefore(site.site_id, catalog.goalsOf(site.site_id).map((g) => g.id), minDay)
      if (dropped.counters.length || dropped.goalDays.length) {
        await this.#write(async () => store.deleteDaysOps(p, site.site_id, dropped.counters, dropped.goalDays))
      }
    }
  }

  /** Another owner claimed the partition: stops replays, and nothing more is written. */
  abandon(): void {
    this.#stopped = true
  }

  /** Stops replays, waits for writes, and takes a last snapshot: the partition leaves or the node stops. */
  async close(): Promise<void> {
    this.#stopped = true
    await Promise.allSettled([...this.#replays.values()])
    await this.#writes.catch((err) => this.#c.onError(err, `partition ${this.partition}: write`))
    if (this.#snapshotting) await this.#snapshotting.catch(() => undefined)
    await this.snapshot()
  }
}

/** The filter of a partition's stored sessions, from the store's keys; it grows by layers from then on. */
async function storedFilter(store: StateStore, partition: number): Promise<ScalableBloomFilter> {
  const stored: { hi: number; lo: number }[] = []
  for await (const h of store.summaryHashes(partition)) stored.push(h)
  const filter = new ScalableBloomFilter(Math.max(1 << 17, 2 * stored.length))
  for (const h of stored) filter.add(h.hi, h.lo)
  return filter
}
