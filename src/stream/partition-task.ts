/**
 * One partition of the events topic, owned by this node for as long as the group says so (Kafka
 * Streams' stream task): it restores the partition's state, folds its records, snapshots its
 * changes to the local store (and first to the changelog, when there is one), backfills new goals
 * and re-buckets sites over the partition's own retained log, and snapshots once more when the
 * partition leaves.
 */
import { EventReaders, EventRecord, readEventAt, type EventLog, type LogRecord } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { Goal, Site } from '../schema/index.js'
import type { Op, PartitionMeta, StateStore } from '../store/index.js'
import { ScalableBloomFilter, hashKey } from '../sketch/index.js'
import { dayOfHourKey, todayOf } from '../goals/index.js'
import type { GoalIndex } from './goal-index.js'
import { HOUR_DAYS, PartitionState, type StateKind } from './partition-state.js'
import type { Changelog } from './changelog.js'
import { replayLog } from './replay.js'
import { tallyValues } from './tally-values.js'
import { linkSessionsAcross } from './link-across.js'
import { restorePartition } from './restore.js'
import { neededByFold } from './settled-days.js'
import { ReplayJobs } from './replay-jobs.js'
import type { SnapshotQueue } from './snapshot-queue.js'

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
  /** the node's snapshots, run one at a time (absent: this task's run as they come) */
  snapshots?: SnapshotQueue
  /** summaries of sessions not folded for this long leave memory (default two hours) */
  hotSessionMs?: number
  /**
   * Changed summaries that start a snapshot before the interval is up (default SNAPSHOT_AT_DIRTY).
   * A rebuild, which serves no one meanwhile, takes more: each summary is then written about once.
   */
  snapshotAtDirty?: number
  onError(err: unknown, where: string): void
  onProgress?(message: string, fields: Record<string, unknown>): void
  /** a record that cannot be folded was set aside */
  onDeadLetter?(partition: number, offset: number, err: unknown): void
  /** events of a site that is still unknown after the config caught up */
  onUnknownSite?(partition: number, siteId: string): void
}

/** what a task's memory is weighed by (`memory`, the /metrics gauges, /api/status) */
export const MEMORY_KINDS = ['summaries', 'goals', 'counters', 'filter'] as const
export type MemoryKind = StateKind | 'filter'

/** Summaries of sessions not folded for this long (processing time) leave memory (they stay in the store). */
const HOT_SESSION_MS = 2 * 60 * 60 * 1000
/** how far ahead of the clock ingest accepts a timestamp (ingest/validate-event.ts) */
const FUTURE_SKEW_MS = 5 * 60 * 1000
/**
 * Changed summaries that start a snapshot before the interval is up. A snapshot is one LevelDB
 * batch, which grows by copying itself whole (a C++ string doubling): at ~45 k summaries (14 MB)
 * one put could stall the loop 30–80 ms on a busy core. At this bound a batch stays near 2.5 MB.
 */
const SNAPSHOT_AT_DIRTY = 8192
/** how long the pass lets settled days go before the event loop gets a turn */
const EVICT_SLICE_MS = 10
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
  /** the pass counting conversions by value (tallyValues), or the last one */
  #tallying: Promise<boolean> = Promise.resolve(true)
  readonly #replays: ReplayJobs
  /** writes outside snapshots (deletions, replay markers), in order; a snapshot waits for them */
  #writes: Promise<void> = Promise.resolve()
  #snapshotting: Promise<void> | null = null
  #summariesPrunedAt = 0
  /**
   * Folds between their look at the session table and their use of what they saw. Eviction waits
   * while there is one: a session seen in memory, then evicted during the fold's store read, would
   * be folded anew from nothing (its earlier pages, days and conversions lost).
   */
  #folding = 0
  /** what the fold reads records with: a set per fold under way, kept for the next (no object a record) */
  readonly #readers = new EventReaders()
  /** an idle eviction came due while a fold was under way: the last fold out runs it */
  #evictDue = false
  /**
   * Every record below this offset has been matched against the goal index by the live fold. It runs
   * ahead of `state.offset` while a fold awaits its dead-letter writes: a goal created then must
   * backfill up to here, or the batch just folded (before the goal existed) is counted by neither.
   */
  #matchedTo = 0
  /**
   * Sessions that may have a stored summary. A new session (most sessions, in real traffic) is
   * certainly not in the store, and this answers so without a LevelDB read (8.6 µs each, measured).
   * Built from the store's keys when the partition is restored; from then on every session that
   * leaves memory is added again (its summary is stored by then), so a layer that closed before the
   * retention's cutoff holds only sessions the summary pruning has removed, and is dropped then.
   * While a session is in memory the filter is not asked about it.
   */
  readonly #stored: ScalableBloomFilter
  /** the error a fold keeps failing with, while it retries; undefined when healthy */
  stalled: unknown = undefined

  private constructor(state: PartitionState, c: TaskContext, end: number, meta: PartitionMeta, stored: ScalableBloomFilter) {
    this.state = state
    this.#stored = stored
    state.summaries.onLeave = (hi, lo) => stored.add(hi, lo)
    state.settled.reader = (goal, day) => c.store.readGoalDay(state.partition, goal, day)
    this.#c = c
    this.#end = end
    this.#zones = meta.zones
    this.#replays = new ReplayJobs({ partition: state.partition, onError: c.onError, onProgress: c.onProgress })
  }

  /** Restores a partition (restore.ts) and starts its task. */
  static async open(partition: number, c: TaskContext): Promise<{ task: PartitionTask; meta: PartitionMeta }> {
    const restored = await restorePartition(partition, c)
    const { state, meta } = restored
    const task = new PartitionTask(state, c, restored.end, meta, restored.stored)
    // goals deleted while the partition was elsewhere or the node was down
    for (const id of new Set([...state.goals.keys(), ...state.revenue.keys()])) if (!c.catalog.goals.has(id)) task.dropGoal(id)
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
    await this.stepToEnd(this.#end)
    return this.caughtUp
  }

  /**
   * Moves the offset to `end` when no record lies before it. A Kafka transaction's commit marker
   * takes the offset after its last record and no fold reads it, so a partition that folded
   * everything would stand one short of the end until its next record: its lag would read 1, and
   * a restore would start at the marker. A fold that moves the offset meanwhile wins.
   */
  async stepToEnd(end: number): Promise<void> {
    const from = this.state.offset
    if (from >= end) return
    const next = await this.#c.log.read(this.#c.topic, this.partition, from, 1)
    if ((next.length === 0 || next[0].offset >= end) && this.state.offset === from) this.state.offset = end
  }

  /** Bytes of one kind held in memory: the state's (PartitionState.memory), or the filter of stored sessions. */
  memory(kind: MemoryKind): number {
    return kind === 'filter' ? this.#stored.memoryBytes() : this.state.memory(kind)
  }

  get replaying(): number {
    return this.#replays.size
  }

  /** where the fold stands against the log's end at assignment, while it catches up */
  get catchUp(): { offset: number; end: number } {
    return { offset: this.state.offset, end: this.#end }
  }

  /** whether the site's days are being rebuilt in a new time zone (its counts are partial meanwhile) */
  rebucketing(siteId: string): boolean {
    return this.#replays.get(`site:${siteId}`) !== undefined
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
    const bad: { record: LogRecord; err: unknown }[] = []
    this.#folding++
    try {
      await this.#foldRecords(records, bad)
    } finally {
      if (--this.#folding === 0 && this.#evictDue) this.#evictIdle()
    }
    const { state } = this
    for (const { record, err } of bad) {
      await this.#c.store.putDeadLetter(state.partition, record.offset, record.value, err instanceof Error ? err.message : String(err))
      this.#c.onDeadLetter?.(state.partition, record.offset, err)
    }
    state.offset = Math.max(state.offset, records[records.length - 1].offset + 1)
    if (state.summaries.dirtyCount >= (this.#c.snapshotAtDirty ?? SNAPSHOT_AT_DIRTY) && this.#snapshotting === null) {
      void this.snapshot().catch((err) => this.#c.onError(err, 'snapshot'))
    }
    // over the cap with only dirty summaries left: write them now so they can leave memory
    if (this.#folding === 0 && state.evictOver(this.#c.maxHotSessions()) > 0) {
      await this.snapshot()
      if (this.#folding === 0) state.evictOver(this.#c.maxHotSessions())
    }
  }

  /** The fold itself, with a set of record readers of its own for as long as it runs. */
  async #foldRecords(records: LogRecord[], bad: { record: LogRecord; err: unknown }[]): Promise<void> {
    const readers = this.#readers.take()
    try {
      await this.#foldRead(records, readers, bad)
    } finally {
      this.#readers.give(readers)
    }
  }

  /**
   * Looks up every record's session, reads the cold ones from the store (an await: snapshots,
   * catalog changes and replays run meanwhile, but nothing evicts, see #folding; another fold
   * reads with readers of its own), then folds them all without yielding.
   */
  async #foldRead(records: LogRecord[], readers: EventRecord[], bad: { record: LogRecord; err: unknown }[]): Promise<void> {
    const { state } = this
    const { catalog, store } = this.#c
    const events = new Array<EventRecord | undefined>(records.length)
    const missing: string[] = []
    const asked = new Set<string>()
    let unknownSite = false
    state.summaries.clock = Date.now()
    for (let i = 0; i < records.length; i++) {
      const r = records[i]
      try {
        // decoded once: by ingest for the live fold, else here (log/event-record.ts)
        const e = r.decoded instanceof EventRecord ? r.decoded : readEventAt(readers, i, r.value)
        events[i] = e
        // the filter first: a new session (most, in real traffic) needs no key and no set entry
        if (state.summaries.slotOf(e.hashHi, e.hashLo) < 0 && this.#stored.has(e.hashHi, e.hashLo)) {
          const hk = hashKey(e.hashHi, e.hashLo)
          if (!asked.has(hk)) {
            asked.add(hk)
            missing.push(hk)
          }
        }
        if (!catalog.sites.has(e.site_id)) unknownSite = true
      } catch (err) {
        bad.push({ record: r, err })
      }
    }
    if (missing.length) {
      const found = await store.getSummaries(state.partition, missing)
      state.summaries.clock = Date.now()
      found.forEach((s, i) => {
        if (s && !state.summaries.has(missing[i])) state.summaries.set(missing[i], s)
      })
    }
    // a site created on another node may not have reached this node's config view yet
    if (unknownSite) await catalog.sync()
    // events of settled days, or of sessions that began on one, read those days' sets back first
    // (settled-days.ts); asked again after each read, as a fold beside this one may widen a span
    for (;;) {
      const needed = neededByFold(state.settled.edge, events, state.summaries, catalog.sites, (id) => this.#c.goals.goalIds(id), state.goals)
      if (needed.size === 0) break
      await Promise.all([...needed].map(([id, days]) => state.settled.load(id, days)))
    }
    const sites = catalog.sites
    for (let i = 0; i < records.length; i++) {
      const e = events[i]
      if (!e) continue
      const site = sites.get(e.site_id)
      if (!site) {
        this.#c.onUnknownSite?.(state.partition, e.site_id)
        continue
      }
      try {
        state.fold(e, e.hashHi, e.hashLo, site, this.#c.goals, records[i].offset)
      } catch (err) {
        bad.push({ record: records[i], err })
      }
    }
    this.#matchedTo = Math.max(this.#matchedTo, records[records.length - 1].offset + 1)
  }

  /** the offset below which the live fold has matched every record against today's goals */
  get #liveFrom(): number {
    return Math.max(this.state.offset, this.#matchedTo)
  }

  /** Counts a goal over this partition's retained log below where the live fold stands now. */
  backfill(goal: Goal): void {
    const until = this.#liveFrom
    this.#replays.run(`goal:${goal.id}`, until, async () => {
      const done = await this.#replay(goal.site_id, [goal], false, until)
      return done && this.#c.catalog.goals.has(goal.id)
    })
  }

  /** Records that these goals are counted up to the current offset, as a finished backfill would. */
  markCounted(goalIds: string[]): void {
    for (const id of goalIds) this.#replays.markDone({ id: `goal:${id}`, until: this.#liveFrom, done: true })
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
    const until = this.#liveFrom
    this.state.clearSite(site.site_id, ids)
    this.#zones.set(site.site_id, site.timezone)
    this.#dirtyZones.set(site.site_id, site.timezone)
    const id = `site:${site.site_id}`
    const cleared = this.#write(async () => [store.replayOp(p, { id, until, done: false }), ...(await store.clearSiteOps(site.site_id, ids, p))])
    this.#replays.run(id, until, async () => {
      await cleared
      return this.#replay(site.site_id, catalog.goalsOf(site.site_id), true, until)
    })
  }

  dropGoal(goalId: string): void {
    this.state.dropGoal(goalId)
    void this.#write(() => this.#c.store.deleteGoalOps(goalId, this.state.partition)).catch((err) => this.#c.onError(err, `partition ${this.partition}: delete goal`))
  }

  async #replay(siteId: string, goals: Goal[], counters: boolean, until: number): Promise<boolean> {
    const { log, topic, catalog, onProgress } = this.#c
    const summaries = (hks: string[]) => this.#c.store.getSummaries(this.partition, hks)
    // the replay adds conversions it knows no attributes of: the goals are counted by value afterwards
    this.state.retally(goals.map((g) => g.id))
    const done = await replayLog({ log, topic, catalog, state: this.state, siteId, goals, counters, summaries, until, stopped: () => this.#replays.stopped, onProgress })
    if (done) void this.tallyValues().catch((err) => this.#c.onError(err, `partition ${this.partition}: counting conversions by value`))
    return done
  }

  /**
   * Counts the conversions by attribute values of the goals whose counts wait (tally-values.ts),
   * while the partition serves. One pass at a time (two would count a part twice): a call made
   * during a pass runs after it.
   */
  tallyValues(): Promise<boolean> {
    const reader = (hks: string[]) => this.#c.store.getSummaries(this.partition, hks)
    const previous = this.#tallying
    const pass = previous.catch(() => undefined).then(() => tallyValues(this.state, reader, () => this.#replays.stopped))
    this.#tallying = pass
    return pass
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
    let snapshotting = this.#snapshotting
    if (snapshotting === null) {
      const queue = this.#c.snapshots
      snapshotting = (queue ? queue.run(() => this.#snapshot()) : this.#snapshot()).finally(() => (this.#snapshotting = null))
      this.#snapshotting = snapshotting
    }
    return snapshotting
  }

  async #snapshot(): Promise<void> {
    this.state.settled.writing++
    try {
      await this.#snapshotOnce()
    } finally {
      this.state.settled.writing--
    }
  }

  async #snapshotOnce(): Promise<void> {
    const { state } = this
    const { store, catalog } = this.#c
    await this.#writes.catch(() => undefined)
    const dirty = state.takeDirty()
    const replays = this.#replays.takeDone()
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
      this.#replays.restoreDone(replays)
      for (const [site, tz] of zones) if (!this.#dirtyZones.has(site)) this.#dirtyZones.set(site, tz)
      throw err
    } finally {
      state.written(dirty)
    }
    if (this.#folding === 0) this.#evictIdle()
    else this.#evictDue = true
  }

  #evictIdle(): void {
    this.#evictDue = false
    this.state.evictSummaries(Date.now() - (this.#c.hotSessionMs ?? HOT_SESSION_MS))
  }

  /** Drops day buckets that fell out of the retention window, in memory and in the store. */
  async enforceRetention(now = Date.now()): Promise<void> {
    const { catalog, store, retentionDays, changelog } = this.#c
    const p = this.partition
    if (now - this.#summariesPrunedAt >= SUMMARY_PRUNE_EVERY_MS) {
      this.#summariesPrunedAt = now
      const cutoff = now - retentionDays * 86_400_000
      const pruned = await store.pruneSummaries(p, cutoff)
      if (pruned.length && changelog) await changelog.write(p, pruned)
      if (pruned.length) this.#c.onProgress?.('pruned session summaries past retention', { partition: p, pruned: pruned.length })
      // a session only a layer closed before then remembers had its last event by the layer's close
      // (plus the 5 minutes of clock skew ingest allows): its summary was just pruned
      this.#stored.retire(cutoff - FUTURE_SKEW_MS)
    }
    for (const site of catalog.sites.values()) {
      const today = todayOf(site.timezone, now)
      const dropped = this.state.dropBefore(site.site_id, catalog.goalsOf(site.site_id).map((g) => g.id), today - retentionDays + 1, today - HOUR_DAYS + 1)
      if (dropped.counters.length || dropped.goalDays.length || dropped.siteHours.length || dropped.goalHours.length || dropped.revenueDays.length || dropped.valueDays.length) {
        await this.#write(async () => store.deleteDaysOps(p, site.site_id, dropped))
      }
    }
  }

  /**
   * Links a restored state's sessions across each site's goals (link-across.ts), then lets overlap
   * and funnels take it a day at a time. Runs while the partition serves; a stopped task stops it.
   */
  async linkRestored(): Promise<void> {
    // a snapshot written once linked says so (a!<p>!linked); only older states are linked here
    if (this.state.linkedAcross) return
    const { catalog } = this.#c
    for (const site of catalog.sites.values()) {
      const ids = catalog.goalsOf(site.site_id).map((g) => g.id)
      if (!(await linkSessionsAcross(this.state, ids, () => this.#replays.stopped))) return
    }
    this.state.linkedAcross = true
  }

  /**
   * Packs the sets of days that have stopped changing — days before yesterday in the site's zone
   * — to about half their memory (U64Map.pack): the goals' day and hour sets, and the exact sets of
   * the site's day, hour and breakdown counters, a goal's day or a counter group's day per turn of
   * the event loop. A late event for such a day unpacks what it changes again, and the next pass
   * packs it back. Between turns the fold, snapshots and retention go on: a set is packed whole or
   * not at all, and stays the same object, so nothing that holds it sees a difference.
   */
  async packSettled(now = Date.now()): Promise<void> {
    const { catalog } = this.#c
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve))
    // what can leave memory for the store goes first; what stays (days still written) is packed
    await this.#tallying.catch(() => undefined)
    // a slice of the event loop at a time: each day let go is a walk of the side index's recent sessions
    for (let tries = 0; tries < 100 && !this.#replays.stopped;) {
      const n = this.evictSettled(now, performance.now() + EVICT_SLICE_MS)
      if (n === 0) break
      if (n === undefined) tries++
      await new Promise((resolve) => (n === undefined ? setTimeout(resolve, 100) : setImmediate(resolve)))
    }
    this.state.settled.passed()
    for (const site of catalog.sites.values()) {
      const settled = todayOf(site.timezone, now) - 1
      for (const goal of catalog.goalsOf(site.site_id)) {
        const g = this.state.goals.get(goal.id)
        for (const day of g?.days() ?? []) {
          const set = day < settled ? g!.dayMap(day) : undefined
          if (set === undefined || set.packed) continue
          set.pack()
          await turn()
        }
        for (const [hour, set] of g?.hourMaps() ?? []) if (dayOfHourKey(hour) < settled) set.pack()
      }
      const s = this.state.sites.get(site.site_id)
      for (const [day, counter] of s?.days ?? []) if (day < settled) counter.pack()
      for (const [hour, counter] of s?.hours ?? []) if (dayOfHourKey(hour) < settled) counter.pack()
      for (const [day, groups] of s?.values ?? []) {
        if (day >= settled) continue
        for (const counters of groups) {
          counters.forEach((_, counter) => counter.pack())
          await turn()
        }
      }
    }
  }

  /**
   * Lets the sets of settled days leave memory for the store (settled-days.ts): days before
   * yesterday in the site's zone, written (not dirty), of goals whose counts by value are counted.
   * Returns how many left, or undefined when now is not the time: work under way reads days across
   * awaits, or a fold, snapshot or replay runs, or a restored state is not linked across goals yet.
   * Past `until` (a `performance.now()` time) it stops after the day it let go: the pass asks again
   * after a turn.
   */
  evictSettled(now = Date.now(), until = Infinity): number | undefined {
    const { state } = this
    const { catalog } = this.#c
    if (state.settled.pins > 0 || this.#folding > 0 || this.#snapshotting !== null || this.#replays.size > 0 || !state.linkedAcross) return undefined
    let n = 0
    for (const site of catalog.sites.values()) {
      const settled = todayOf(site.timezone, now) - 1
      for (const goal of catalog.goalsOf(site.site_id)) {
        const g = state.goals.get(goal.id)
        const tallies = state.tallies.get(goal.id)
        // counts by value not counted yet are counted from the sets
        if (g === undefined || tallies === undefined || tallies.rebuilding) continue
        for (const d of g.days()) {
          if (d >= settled || g.dayMap(d) === undefined || !state.unchanged(goal.id, d)) continue
          n += state.settled.evict(g, [d])
          if (n > 0 && performance.now() > until) return n
        }
      }
    }
    return n
  }

  /** Another owner claimed the partition: stops replays, and nothing more is written. */
  abandon(): void {
    void this.#replays.stop()
  }

  /** Stops replays, waits for writes, and takes a last snapshot: the partition leaves or the node stops. */
  async close(): Promise<void> {
    await this.#replays.stop()
    await this.#writes.catch((err) => this.#c.onError(err, `partition ${this.partition}: write`))
    if (this.#snapshotting) await this.#snapshotting.catch(() => undefined)
    await this.snapshot()
  }
}
