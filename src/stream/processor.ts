import type { EventLog, GroupListener, LogRecord, MemberInfo, Membership, UnreadableBatch } from '../log/index.js'
import type { Catalog, CatalogEvent } from '../catalog/index.js'
import type { StateStore } from '../store/index.js'
import { GoalIndex } from './goal-index.js'
import type { PartitionState } from './partition-state.js'
import type { PartitionStop, SessionSummary } from '../schema/index.js'
import { ChangelogLost, type Changelog, type ChangelogTopic, type ClaimedChangelog } from './changelog.js'
import { SnapshotQueue } from './snapshot-queue.js'
import { PartitionTask, type TaskContext } from './partition-task.js'

export interface ProcessorOptions {
  log: EventLog
  store: StateStore
  catalog: Catalog
  topic: string
  /** the consumer group: every node of one cluster joins the same one */
  group?: string
  /** what the group learns about this node: where it answers queries */
  member?: MemberInfo
  /** where partition state goes so another node can take it over (Kafka mode) */
  changelog?: ChangelogTopic
  exactThreshold: number
  snapshotIntervalMs: number
  retentionDays: number
  /** session summaries held in memory by this node, over all its partitions */
  maxHotSessions?: number
  onError(err: unknown, where: string): void
  /** progress of long work: restores and replays */
  onProgress?(message: string, fields: Record<string, unknown>): void
  onDeadLetter?(partition: number, offset: number, err: unknown): void
  /**
   * A record batch of the events topic that cannot be read: `stop` the partition there (the
   * default: nothing is skipped unseen), or `dead-letter` — keep the batch's bytes in the
   * dead-letter store under its first offset and go on past it (Kafka Streams' log-and-fail and
   * log-and-continue deserialization handlers).
   */
  unreadableBatches?: 'stop' | 'dead-letter'
}

const RETENTION_EVERY_MS = 60 * 60 * 1000
/** a fold that keeps failing is retried after 0.1, 0.2, 0.4 … s, at most this long apart */
const MAX_BACKOFF_MS = 30_000
/** failures in a row during start-up before start() gives up naming the partition */
const START_ATTEMPTS = 5
/** a partition this node still owns but could not take up again is retried this often */
const RESTART_AFTER_MS = 1000
const NO_TASKS: ReadonlyMap<number, PartitionTask> = new Map()

/** A task's claim on its partition's changelog (Kafka mode), made by its restore. */
interface Claim {
  partition: number
  changelog?: ClaimedChangelog
}

/**
 * Folds the events topic into per-partition state. It joins the topic's consumer group and runs a
 * task for every partition the group gives it (the embedded log: all of them): restored on
 * assignment, snapshotted on a schedule and when the partition leaves. Catalog changes reach every
 * task: new goals are backfilled from the retained log (goals are retroactive), deleted ones
 * dropped, sites with a new time zone re-bucketed.
 */
export class StreamProcessor {
  readonly #tasks = new Map<number, PartitionTask>()
  readonly #snapshots = new SnapshotQueue()
  readonly #claims = new Map<number, Claim>()
  readonly #o: ProcessorOptions
  readonly #index = new GoalIndex()
  readonly #restoring = new Set<number>()
  /** partitions of this node whose folding stopped, and why (status, readiness, queries' 503) */
  readonly #stops = new Map<number, PartitionStop>()
  readonly #timers: NodeJS.Timeout[] = []
  #membership: Membership | undefined
  #starting = true
  #stopped = false
  eventsFolded = 0
  deadLetters = 0

  constructor(opts: ProcessorOptions) {
    this.#o = opts
  }

  /**
   * The tasks of the partitions this node can vouch that it owns right now — none while the group
   * has not confirmed its membership for a while: a node paused past its session timeout may have
   * lost its partitions without knowing it yet, and its state of them is stale. Queries read
   * these; a partition missing here is asked of its owner.
   */
  get tasks(): ReadonlyMap<number, PartitionTask> {
    return this.#membership?.current?.() === false ? NO_TASKS : this.#tasks
  }

  /** the partition states held here, for local queries and gauges */
  get parts(): PartitionState[] {
    return [...this.#tasks.values()].map((t) => t.state)
  }

  /** in the group, nothing restoring, every owned partition caught up and folding */
  get ready(): boolean {
    return this.unreadyReason === undefined
  }

  /** why not ready, for /readyz */
  get unreadyReason(): string | undefined {
    if (!this.#membership) return 'joining the consumer group'
    for (const stop of this.#stops.values()) return `partition ${stop.partition} is stopped at offset ${stop.offset} of ${stop.topic}: ${stop.reason}`
    if (this.#restoring.size) return `restoring partition ${[...this.#restoring].join(', ')}`
    for (const task of this.#tasks.values()) {
      if (task.stalled !== undefined) return `partition ${task.partition} keeps failing: ${message(task.stalled)}`
      if (!task.caughtUp) return `partition ${task.partition} is catching up with the log`
    }
    return undefined
  }

  /** why a partition of this node stopped folding, if it did */
  stopOf(partition: number): PartitionStop | undefined {
    return this.#stops.get(partition)
  }

  /** the partitions of this node that stopped folding */
  get stops(): PartitionStop[] {
    return [...this.#stops.values()]
  }

  /** true while the partition's state is being restored here */
  restoring(partition: number): boolean {
    return this.#restoring.has(partition)
  }

  #stop(p: number, reason: string, offset: number): void {
    const known = this.#stops.get(p)
    if (known?.reason === reason && known.offset === offset) return
    this.#stops.set(p, { reason, topic: this.#o.topic, partition: p, offset, since: new Date().toISOString() })
  }

  get goals(): GoalIndex {
    return this.#index
  }

  get membership(): Membership | undefined {
    return this.#membership
  }

  get partitions(): number {
    return this.#o.log.partitionsOf(this.#o.topic)
  }

  /**
   * Joins the group and resolves once the partitions assigned at first have caught up with the
   * log. A partition that cannot be restored or keeps failing rejects with its number and cause.
   */
  async start(): Promise<void> {
    const { log, catalog, topic } = this.#o
    for (const g of catalog.goals.values()) this.#index.add(g)
    catalog.onChange((e) => this.#onCatalog(e))
    let failed: (err: unknown) => void = () => {}
    const failure = new Promise<never>((_, reject) => (failed = reject))
    failure.catch(() => undefined)
    this.#startFailed = failed
    this.#joining = log.join(topic, this.#o.group ?? topic, this.#o.member ?? { url: '' }, this.#listener())
    this.#membership = await this.#joining
    const caughtUp = (async () => {
      while (!this.#allCaughtUp() && !this.#stopped) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        await this.#probeCaughtUp()
      }
    })()
    await Promise.race([caughtUp, failure])
    this.#starting = false
    const every = (ms: number, what: string, fn: () => Promise<void>) => {
      const t = setInterval(() => void fn().catch((err) => this.#o.onError(err, what)), ms)
      t.unref()
      this.#timers.push(t)
    }
    every(this.#o.snapshotIntervalMs, 'snapshot', () => this.snapshot())
    // partitions assigned later (a rebalance) catch up while the node serves
    every(250, 'catching up', () => this.#probeCaughtUp())
    every(RETENTION_EVERY_MS, 'retention', async () => {
      await this.enforceRetention()
      await this.packSettled()
    })
    await this.enforceRetention()
    // restored days are linked across goals and packed while the node serves: it can take seconds at a large state
    void this.#linkRestored().then(() => this.packSettled()).catch((err) => this.#o.onError(err, 'linking and packing'))
    // conversions by value are counted from the restored sets while the node serves (breakdowns walk the sessions until then)
    for (const task of this.#tasks.values()) void task.tallyValues().catch((err) => this.#o.onError(err, `partition ${task.partition}: counting conversions by value`))
  }

  #startFailed: (err: unknown) => void = () => {}
  #joining: Promise<Membership> | undefined

  async #probeCaughtUp(): Promise<void> {
    // a probe that cannot read (a batch that cannot be read, the broker away) leaves the task
    // catching up; its delivery reports the failure and stops the partition where it must
    for (const task of this.#tasks.values()) if (!task.caughtUp) await task.probeCaughtUp().catch(() => false)
  }

  #allCaughtUp(): boolean {
    if (this.#restoring.size) return false
    for (const task of this.#tasks.values()) if (!task.caughtUp) return false
    return true
  }

  #context(claim: Claim): TaskContext {
    const o = this.#o
    return {
      log: o.log, topic: o.topic, store: o.store, catalog: o.catalog, goals: this.#index, changelog: this.#changelogOf(claim),
      exactThreshold: o.exactThreshold, retentionDays: o.retentionDays,
      maxHotSessions: () => Math.max(1000, Math.floor((o.maxHotSessions ?? Infinity) / Math.max(1, this.#tasks.size))),
      snapshots: this.#snapshots,
      onError: o.onError, onProgress: o.onProgress,
      onDeadLetter: (p, offset, err) => {
        this.deadLetters++
        o.onDeadLetter?.(p, offset, err)
      },
    }
  }

  /**
   * The changelog as one task sees it, bound to the task's own claim: its restore claims the
   * partition (fencing every earlier writer) before reading, and its writes go through that claim
   * only — a task that lost it can never write through a later task's.
   */
  #changelogOf(claim: Claim): Changelog | undefined {
    const topic = this.#o.changelog
    if (!topic) return undefined
    return {
      restore: async (p, store, onProgress) => {
        const started = Date.now()
        claim.changelog = await topic.claim(p)
        const records = await claim.changelog.restore(store, onProgress)
        if (records > 0) this.#o.onProgress?.('restored from the changelog', { partition: p, records, ms: Date.now() - started })
      },
      write: async (p, ops) => {
        if (!claim.changelog) throw new Error(`partition ${p}: its changelog is not claimed`)
        try {
          return await claim.changelog.write(ops)
        } catch (err) {
          if (err instanceof ChangelogLost) this.#lost(claim, err)
          throw err
        }
      },
    }
  }

  /** Opens a partition's task (restore, then the work it still owes) and holds it. */
  async #open(p: number): Promise<PartitionTask> {
    const claim: Claim = { partition: p }
    let opened
    try {
      opened = await PartitionTask.open(p, this.#context(claim))
    } catch (err) {
      await claim.changelog?.release().catch(() => undefined)
      throw err
    }
    this.#tasks.set(p, opened.task)
    this.#claims.set(p, claim)
    opened.task.resume(opened.meta)
    // its restored past days are packed while it catches up, not at the next hourly pass
    if (!this.#starting) {
      void opened.task.linkRestored().then(() => opened.task.packSettled()).catch((err) => this.#o.onError(err, `partition ${p}: linking and packing`))
      void opened.task.tallyValues().catch((err) => this.#o.onError(err, `partition ${p}: counting conversions by value`))
    }
    return opened.task
  }

  /**
   * Another owner claimed the partition's changelog (this node was paused past its session timeout,
   * or a node that had lost the partition claimed it late), or a write's outcome is unknown: the
   * task stops at once, without writing its local store. A node that was expelled learns what it
   * owns when it rejoins; one the group still confirms as the owner takes the partition up again.
   */
  #lost(claim: Claim, err: unknown): void {
    const p = claim.partition
    if (this.#claims.get(p) !== claim) return
    const task = this.#tasks.get(p)
    this.#claims.delete(p)
    this.#tasks.delete(p)
    task?.abandon()
    void claim.changelog?.release().catch(() => undefined)
    this.#o.onProgress?.('partition lost: its changelog was claimed by another owner', { partition: p, reason: message(err) })
    if (!this.#stopped) this.#membership?.restart?.([p])
  }

  #listener(): GroupListener {
    const listener: GroupListener = {
      assigned: async (partitions) => {
        const offsets = new Map<number, number>()
        for (const p of partitions) this.#restoring.add(p)
        try {
          for (const p of partitions) {
            // stopping during a restore: what is restored so far is snapshotted, the rest stays as it was
            if (this.#stopped) break
            let task = this.#tasks.get(p)
            if (!task) {
              try {
                task = await this.#open(p)
              } catch (err) {
                const e = new Error(`partition ${p}: restore failed: ${message(err)}`, { cause: err })
                this.#startFailed(e)
                throw e
              }
            }
            this.#restoring.delete(p)
            // a task runs again: a stop for a failure is over (an unreadable batch stops it again)
            this.#stops.delete(p)
            offsets.set(p, task.state.offset)
          }
        } finally {
          for (const p of partitions) this.#restoring.delete(p)
        }
        return offsets
      },
      // partitions that stay keep their task, state and claim: nothing is snapshotted or restored
      kept: async (partitions) => {
        const offsets = new Map<number, number>()
        for (const p of partitions) {
          const task = this.#tasks.get(p)
          if (task) offsets.set(p, task.state.offset)
        }
        const gone = partitions.filter((p) => !offsets.has(p))
        if (gone.length) for (const [p, offset] of await listener.assigned(gone)) offsets.set(p, offset)
        return offsets
      },
      revoked: async (partitions) => {
        await Promise.all(partitions.map(async (p) => {
          const task = this.#tasks.get(p)
          const claim = this.#claims.get(p)
          this.#tasks.delete(p)
          this.#claims.delete(p)
          // a failed last snapshot loses nothing: the log still holds what it would have written
          await task?.close().catch((err) => {
            // the next owner claimed the partition first: it replays what this snapshot held
            if (err instanceof ChangelogLost) this.#o.onProgress?.('last snapshot refused: the next owner claimed the partition first', { partition: p })
            else this.#o.onError(err, `partition ${p}: last snapshot`)
          })
          // released once its last write is readable: the next owner's restore sees it
          await claim?.changelog?.release().catch(() => undefined)
        }))
      },
      // partitions may move at the end of it: their next owner restores less when the changelog is fresh
      rebalancing: () => void this.snapshot().catch((err) => this.#o.onError(err, 'snapshot as a rebalance starts')),
      records: (p, records) => this.#fold(p, records),
      // partitions that went elsewhere are not this node's to report
      joined: (partitions) => {
        for (const p of this.#stops.keys()) if (!partitions.includes(p)) this.#stops.delete(p)
      },
      unreadable: (p, err) => this.#unreadable(p, err),
      failed: (p, err) => {
        this.#o.onError(err, `partition ${p}`)
        const offset = this.#tasks.get(p)?.state.offset ?? this.#stops.get(p)?.offset ?? 0
        this.#stop(p, `its consumer or task failed and is being restarted: ${message(err)}`, offset)
        // a partition this node still owns without a task (taking it up again failed): try again
        if (this.#stopped || this.#tasks.has(p) || !this.#membership?.owned().includes(p)) return
        setTimeout(() => {
          if (!this.#stopped && !this.#tasks.has(p)) this.#membership?.restart?.([p])
        }, RESTART_AFTER_MS).unref()
      },
    }
    return listener
  }

  /**
   * A batch of the partition that cannot be read, after the log's own retries: set aside in the
   * dead-letter store (its bytes under its first offset) when the operator chose so, else the
   * partition stops there and says so.
   */
  async #unreadable(p: number, err: UnreadableBatch): Promise<boolean> {
    if (this.#o.unreadableBatches === 'dead-letter' && this.#tasks.has(p)) {
      await this.#o.store.putDeadLetter(p, err.baseOffset, err.bytes, err.message)
      this.deadLetters += err.lastOffset - err.baseOffset + 1
      this.#o.onDeadLetter?.(p, err.baseOffset, err)
      this.#stops.delete(p)
      return true
    }
    const first = !this.#stops.has(p)
    this.#stop(p, `a record batch cannot be read (offsets ${err.baseOffset}-${err.lastOffset}, ${err.codec}): ${message(err.cause)}`, err.baseOffset)
    if (first) this.#o.onError(err, `partition ${p}: stopped at a batch that cannot be read (GOALPOST_KAFKA_UNREADABLE_BATCH=dead-letter sets such batches aside)`)
    return false
  }

  /** Folds with supervision: an outside failure (the store) is retried with backoff, never skipped. */
  async #fold(p: number, records: LogRecord[]): Promise<void> {
    const task = this.#tasks.get(p)
    if (!task) return
    for (let attempt = 1; ; attempt++) {
      try {
        await task.fold(records)
        task.stalled = undefined
        // past where it stopped: the batch became readable, or the task was restarted
        if (this.#stops.has(p)) this.#stops.delete(p)
        this.eventsFolded += records.length
        return
      } catch (err) {
        task.stalled = err
        this.#o.onError(err, `partition ${p}: fold (attempt ${attempt})`)
        if (this.#starting && attempt >= START_ATTEMPTS) this.#startFailed(new Error(`partition ${p}: ${message(err)}`, { cause: err }))
        if (this.#stopped || this.#tasks.get(p) !== task) throw err
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_BACKOFF_MS, 100 * 2 ** (attempt - 1))))
      }
    }
  }

  #onCatalog(e: CatalogEvent): void {
    if (e.kind === 'site') {
      if (e.before && e.after && e.before.timezone !== e.after.timezone) for (const task of this.#tasks.values()) task.rebucket(e.after)
      return
    }
    if (e.after) {
      this.#index.add(e.after)
      if (!e.before) for (const task of this.#tasks.values()) task.backfill(e.after)
    } else if (e.before) {
      this.#index.remove(e.before.id, e.before.site_id)
      for (const task of this.#tasks.values()) task.dropGoal(e.before.id)
    }
  }

  /** Resolves once this node's backfills of the goal are done, or after `timeoutMs` (they go on). */
  whenBackfilled(goalId: string, timeoutMs: number): Promise<boolean> {
    const running: Promise<void>[] = []
    for (const task of this.#tasks.values()) {
      const job = task.backfilling(goalId)
      if (job) running.push(job)
    }
    // the common case, asked for every goal of every query: nothing to wait for, no timer
    if (running.length === 0) return Promise.resolve(true)
    const jobs = Promise.all(running)
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs)
      void jobs.then(() => (clearTimeout(t), resolve(true)))
    })
  }

  /** Snapshots every owned partition; one failing does not keep the others from theirs. */
  async snapshot(): Promise<void> {
    const results = await Promise.allSettled([...this.#tasks.values()].map((t) => t.snapshot()))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  async enforceRetention(now = Date.now()): Promise<void> {
    for (const task of this.#tasks.values()) await task.enforceRetention(now)
  }

  async #linkRestored(): Promise<void> {
    for (const task of [...this.#tasks.values()]) await task.linkRestored()
  }

  /** Packs the sets of days that have stopped changing (PartitionTask.packSettled). */
  async packSettled(now = Date.now()): Promise<void> {
    for (const task of [...this.#tasks.values()]) await task.packSettled(now)
  }

  /** Summaries by hash key: from memory when hot, else from the store. */
  async summaries(partition: number, hks: string[]): Promise<(SessionSummary | undefined)[]> {
    const state = this.#tasks.get(partition)?.state
    const out: (SessionSummary | undefined)[] = hks.map((hk) => state?.summaries.get(hk))
    const cold = hks.filter((_, i) => out[i] === undefined)
    if (cold.length) {
      const loaded = await this.#o.store.getSummaries(partition, cold)
      let j = 0
      for (let i = 0; i < out.length; i++) if (out[i] === undefined) out[i] = loaded[j++]
    }
    return out
  }

  /** the log's end of some partitions (a stopped partition's lag) */
  async ends(partitions: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>()
    await Promise.all(partitions.map(async (p) => {
      const end = await this.#o.log.endOffset(this.#o.topic, p).catch(() => undefined)
      if (end !== undefined) out.set(p, end)
    }))
    return out
  }

  /** how far each owned partition's fold is behind the log's end */
  async lag(): Promise<Map<number, { offset: number; end: number }>> {
    const out = new Map<number, { offset: number; end: number }>()
    await Promise.all([...this.#tasks.values()].map(async (t) => {
      const end = await this.#o.log.endOffset(this.#o.topic, t.partition)
      // past a last commit marker, the fold stands at the end (PartitionTask.stepToEnd); a read that
      // fails leaves the offset as it is, and the lag says so
      if (t.caughtUp && t.state.offset < end) await t.stepToEnd(end).catch(() => undefined)
      out.set(t.partition, { offset: t.state.offset, end })
    }))
    return out
  }

  /** Leaves the group: every task takes a last snapshot first. */
  async stop(): Promise<void> {
    this.#stopped = true
    for (const t of this.#timers) clearInterval(t)
    const membership = this.#membership ?? (await this.#joining?.catch(() => undefined))
    await membership?.leave()
    // the log may already have let go of partitions without telling (a failed group): close them too
    await this.#listener().revoked([...this.#tasks.keys()])
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err))
