/**
 * Answers queries over every partition of the topic, wherever the partitions are: partials from
 * the tasks held here, and from each other partition's owner over HTTP (Kafka Streams'
 * interactive queries, with group membership as the directory). The merged answer is exactly
 * what one node owning every partition would say.
 */
import type { Catalog } from '../catalog/index.js'
import type { BreakdownDimension, Funnel, FunnelReport, Goal, GoalBreakdown, GoalList, GoalOverlap, GoalReport, PartialsRequest, PartitionStatus, PartitionStop, SessionList, Site, Suggestions } from '../schema/index.js'
import { MEMORY_KINDS, readingSettled, type PartitionState, type PartitionTask, type StreamProcessor } from '../stream/index.js'
import { DaysNotLoaded } from '../goals/index.js'
import {
  goalsPartial, mergeGoals, mergeSessions, mergeSuggestions, sessionsPartial, suggestionsPartial,
  type GoalsPartial, type Partial, type PartialQuery, type SessionsPartial, type SuggestionsPartial, type SummaryLookup,
} from './partials.js'
import { goalListBody, retainedFrom, sessionListBody, suggestionsBody, windowOf, type Cursor } from './queries.js'
import { mergeReports, reportBody, reportPartial, reportPoints, type Interval, type ReportPartial } from './report.js'
import { mergeOverlaps, overlapBody, type OverlapPartial } from './overlap.js'
import { funnelBody, mergeFunnels, type FunnelPartial } from './funnel.js'
import { MAX_WARM_PAIRS, funnelByDays, overlapByDays, warmFunnel, warmPairs } from './day-joins.js'
import { breakdownBody, breakdownPartial, mergeBreakdowns, type BreakdownPartial } from './breakdown.js'
import { warmSessionsPerValue } from './value-sessions.js'
import { warmSettledCorrections } from './counted-conversions.js'

export type AnyQuery = PartialsRequest['query']
export type AnyPartial = Partial | ReportPartial | OverlapPartial | FunnelPartial | BreakdownPartial | { partitions: PartitionStatus[] }

/** A partition held by a node that cannot answer completely yet, and why. */
export interface Unready {
  partition: number
  reason: string
}

/**
 * What a node answers for some partitions: one partial over those it owns and can answer
 * completely, those it does not own, and those it owns that cannot answer yet (absent from older
 * nodes' answers).
 */
export interface PartialAnswer {
  partials: AnyPartial[]
  missing: number[]
  unready?: Unready[]
}

/** Asks another node for partials of some partitions. */
export type RemotePartials = (url: string, query: AnyQuery, partitions: number[]) => Promise<PartialAnswer>

export class PartitionsUnavailable extends Error {}

export interface QueryOptions {
  processor: StreamProcessor
  catalog: Catalog
  /** how other nodes are asked; absent on one machine */
  remote?: RemotePartials
  /** this node's query address */
  self: string
  /** how long a query waits for partitions that are moving between nodes (default 10 s) */
  deadlineMs?: number
  /** how long an owner waits for a running backfill of a goal it is asked about (default 5 s) */
  backfillWaitMs?: number
}

export class InteractiveQueries {
  readonly #o: QueryOptions

  #warming = false

  constructor(opts: QueryOptions) {
    this.#o = opts
  }

  /**
   * The partials of the given partitions that are held here and can answer completely; the rest
   * come back as missing (held elsewhere) or unready (held here, with the reason).
   */
  async local(query: AnyQuery, partitions: number[]): Promise<PartialAnswer> {
    const { processor, catalog } = this.#o
    const missing = partitions.filter((p) => !processor.tasks.has(p) && heldReason(processor, p) === undefined)
    if (missing.length === partitions.length) return { partials: [], missing }
    if (query.kind === 'goals') {
      // a goal created on another node may not be here yet; once it is, its backfill has started
      if (query.goal_ids.some((id) => !catalog.goals.has(id))) await catalog.sync()
      await Promise.all(query.goal_ids.map((id) => processor.whenBackfilled(id, this.#o.backfillWaitMs ?? 5000)))
    } else if (query.kind !== 'suggestions' && query.kind !== 'status') {
      const ids = goalsOf(query)
      if (ids.some((id) => !catalog.goals.has(id))) await catalog.sync()
      await Promise.all(ids.map((id) => processor.whenBackfilled(id, this.#o.backfillWaitMs ?? 5000)))
    }
    // the awaits above let tasks come and go: what is held is decided now. The partials below read
    // the states taken here; the sessions' store reads and the analytics' turns between partitions
    // (and, for overlap and funnels, between parts of one: parts.ts) let folds run meanwhile, and
    // each partition's partial still counts each of its sessions once, whole
    const tasks = processor.tasks
    const unready: Unready[] = []
    const used: PartitionTask[] = []
    /** held here without a task, shown by the status all the same: a stopped partition is news */
    const stoppedOnly: number[] = []
    for (const p of partitions) {
      const task = tasks.get(p)
      if (!task) {
        const held = heldReason(processor, p)
        if (held === undefined) {
          if (!missing.includes(p)) missing.push(p)
        } else if (query.kind === 'status' && processor.stopOf(p)) {
          stoppedOnly.push(p)
        } else {
          unready.push({ partition: p, reason: held })
        }
        continue
      }
      const stop = processor.stopOf(p)
      const reason = query.kind === 'status' ? undefined : stop ? stoppedReason(stop) : unreadyReason(task, query, catalog)
      if (reason !== undefined) unready.push({ partition: p, reason })
      else used.push(task)
    }
    const states = used.map((task) => task.state)
    if (query.kind === 'status' && stoppedOnly.length > 0) {
      const rows = await this.#status(states.map((s) => s.partition))
      return { partials: [{ partitions: [...rows, ...(await this.#stoppedRows(stoppedOnly))] }], missing, unready }
    }
    if (states.length === 0) return { partials: [], missing, unready }
    let partial: AnyPartial
    // a settled day whose sessions are in the store only is read back and the partial asked again
    // (stream/settled-days.ts); counts never need it
    switch (query.kind) {
      case 'goals': partial = goalsPartial(states, query); break
      case 'sessions': partial = await readingSettled(states, () => sessionsPartial(states, (p, hks) => processor.summaries(p, hks), query)); break
      case 'suggestions': partial = suggestionsPartial(states, query); break
      // the analytics walk sessions: one partition at a time, so one query holds the event loop for
      // a partition's share only (each partial is whole for its partition, as another node's is)
      case 'report': partial = await perPartition(states, (s) => reportPartial([s], query), (ps) => mergeReports(ps, query.points.length)); break
      case 'overlap': partial = await perPartition(states, (s) => overlapByDays(s, query), mergeOverlaps); break
      case 'funnel': partial = await perPartition(states, (s) => funnelByDays(s, query), (ps) => mergeFunnels(ps, query.steps.length)); break
      case 'breakdown': partial = await perPartition(states, (s) => breakdownPartial(s, query, (p, hks) => processor.summaries(p, hks)), mergeBreakdowns); break
      case 'status': partial = { partitions: await this.#status(states.map((s) => s.partition)) }; break
    }
    // a walk that let other work run may have seen a partition start re-bucketing its site, or
    // change owners: its share is not whole then, and the query is asked again
    const changed = query.kind === 'status' ? [] : used.filter((task) => processor.tasks.get(task.partition) !== task || unreadyReason(task, query, catalog) !== undefined)
    if (changed.length > 0) {
      const reason = 'changed while the query read it (a re-bucketing or a new owner)'
      return { partials: [], missing, unready: [...unready, ...used.map((task) => ({ partition: task.partition, reason }))] }
    }
    return { partials: [partial], missing, unready }
  }

  async #status(partitions: number[]): Promise<PartitionStatus[]> {
    const lag = await this.#o.processor.lag()
    return partitions.flatMap((p) => {
      const task = this.#o.processor.tasks.get(p)
      if (!task) return []
      const { state } = task
      const at = lag.get(p) ?? { offset: state.offset, end: state.offset }
      let conversions = 0
      for (const g of state.goals.values()) conversions += g.size
      const stopped = this.#o.processor.stopOf(p) ?? null
      return [{
        partition: p, owner: this.#o.self, offset: at.offset, end: at.end, lag: Math.max(0, at.end - at.offset),
        hot_sessions: state.summaries.size, goals: state.goals.size, conversions, state_bytes: MEMORY_KINDS.reduce((n, kind) => n + task.memory(kind), 0),
        folding: stopped ? 'stopped' as const : 'running' as const, stopped,
      }]
    })
  }

  /** rows of partitions owned here whose task is gone (a consumer or task that failed, restarting) */
  async #stoppedRows(partitions: number[]): Promise<PartitionStatus[]> {
    const { processor } = this.#o
    const ends = await processor.ends(partitions)
    return partitions.flatMap((p) => {
      const stopped = processor.stopOf(p)
      if (!stopped) return []
      const end = Math.max(stopped.offset, ends.get(p) ?? stopped.offset)
      return [{
        partition: p, owner: this.#o.self, offset: stopped.offset, end, lag: end - stopped.offset,
        hot_sessions: 0, goals: 0, conversions: 0, state_bytes: 0, folding: 'stopped' as const, stopped,
      }]
    })
  }

  /**
   * Partials covering every partition, each complete: local ones, then each remaining partition's
   * owner, again until the deadline. A partition that is moving, catching up with the log after a
   * takeover, rebuilding the site's days or still counting a new goal's past makes the whole query
   * unavailable (a 503 that says why): an answer is never partial.
   */
  async gather(query: AnyQuery): Promise<AnyPartial[]> {
    const { processor, remote } = this.#o
    let need = Array.from({ length: processor.partitions }, (_, p) => p)
    const out: AnyPartial[] = []
    const deadline = Date.now() + (this.#o.deadlineMs ?? 10_000)
    const why = new Map<number, string>()
    for (;;) {
      const here = await this.local(query, need)
      out.push(...here.partials)
      for (const u of here.unready ?? []) why.set(u.partition, u.reason)
      const waiting = new Set((here.unready ?? []).map((u) => u.partition))
      need = here.missing
      const membership = processor.membership
      if (need.length && remote && membership) {
        const members = await membership.members().catch(() => [])
        const asks = new Map<string, number[]>()
        for (const p of need) {
          const owner = members.find((m) => !m.self && m.partitions.includes(p))
          if (owner) asks.set(owner.url, [...(asks.get(owner.url) ?? []), p])
        }
        const answered = await Promise.all([...asks].map(async ([url, ps]) => {
          try {
            const answer = await remote(url, query, ps)
            out.push(...answer.partials)
            for (const u of answer.unready ?? []) why.set(u.partition, u.reason)
            const notDone = new Set([...answer.missing, ...(answer.unready ?? []).map((u) => u.partition)])
            return ps.filter((p) => !notDone.has(p))
          } catch {
            return []
          }
        }))
        const done = new Set(answered.flat())
        need = need.filter((p) => !done.has(p))
      }
      for (const p of need) if (!waiting.has(p) && !why.has(p)) why.set(p, 'has no owner answering right now (the group is rebalancing)')
      need = [...need, ...waiting]
      if (need.length === 0) return out
      if (Date.now() > deadline) throw new PartitionsUnavailable(describe(need, why))
      for (const p of need) why.delete(p)
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(1, deadline - Date.now()))))
    }
  }

  async goalList(site: Site, goals: Goal[], days: number, now = Date.now()): Promise<GoalList> {
    const window = windowOf(site, days, now)
    const partials = await this.gather({ kind: 'goals', site_id: site.site_id, window, goal_ids: goals.map((g) => g.id) })
    return goalListBody(site, goals, days, window, mergeGoals(partials as GoalsPartial[]))
  }

  async goalSessions(goal: Goal, site: Site, days: number, limit: number, cursor: Cursor | null, now = Date.now()): Promise<SessionList> {
    // a later page keeps the window of the first (see Cursor)
    const window = cursor?.window ?? windowOf(site, days, now)
    const partials = await this.gather({ kind: 'sessions', goal_id: goal.id, window, limit, cursor_ts: cursor?.ts ?? null })
    return sessionListBody(goal, days, limit, cursor, mergeSessions(partials as SessionsPartial[]), window)
  }

  async suggestions(site: Site, of: 'path' | 'event', prefix: string, limit: number, retentionDays: number, now = Date.now()): Promise<Suggestions> {
    const partials = await this.gather({ kind: 'suggestions', site_id: site.site_id, of, prefix, min_day: retainedFrom(site, retentionDays, now) })
    return suggestionsBody(mergeSuggestions(partials as SuggestionsPartial[]), limit)
  }

  /** One goal's totals and series over a window (docs/api.md, "One goal's report"). */
  async goalReport(goal: Goal, site: Site, days: number, interval: Interval, now = Date.now()): Promise<GoalReport> {
    const window = windowOf(site, days, now)
    const { points, starts } = reportPoints(window, interval, site.timezone)
    const partials = await this.gather({ kind: 'report', site_id: site.site_id, goal_id: goal.id, window, interval, points })
    return reportBody(goal, site, days, window, starts, mergeReports(partials as ReportPartial[], points.length))
  }

  /** Sessions that completed both goals, either, or one only, over a window. */
  async goalOverlap(a: Goal, b: Goal, site: Site, days: number, now = Date.now()): Promise<GoalOverlap> {
    const query = { kind: 'overlap' as const, site_id: site.site_id, a: a.id, b: b.id, window: windowOf(site, days, now) }
    const partials = await this.gather(query)
    return overlapBody(query, mergeOverlaps(partials as OverlapPartial[]))
  }

  /** One goal's conversions and sessions per value of a session attribute, the top `limit` and the rest. */
  async goalBreakdown(goal: Goal, site: Site, days: number, by: BreakdownDimension, limit: number, now = Date.now()): Promise<GoalBreakdown> {
    const partials = await this.gather({ kind: 'breakdown', site_id: site.site_id, goal_id: goal.id, window: windowOf(site, days, now), by })
    return breakdownBody(goal.id, days, by, limit, mergeBreakdowns(partials as BreakdownPartial[]))
  }

  /**
   * Fills the per-day joins of overlap and funnels (day-joins.ts) on this node's partitions: every
   * pair of each site's goals, and each funnel's days, so that a dashboard's first question walks
   * only the days that change. Seconds of walking per partition at a busy site's month, in turns
   * of the event loop, once; after that a pass reads stamps. Partitions not yet linked across
   * goals (a restore's first pass) are left to the next pass; so is a pass asked while one runs.
   */
  async warm(): Promise<void> {
    if (this.#warming) return
    this.#warming = true
    try {
      const { processor, catalog } = this.#o
      const lookup: SummaryLookup = (p, hks) => processor.summaries(p, hks)
      for (const task of [...processor.tasks.values()]) {
        const state = task.state
        if (!state.linkedAcross) continue
        let pairs = 0
        for (const site of catalog.sites.values()) {
          // past the budget, pairs would push one another out of the cache at every pass
          const ids = catalog.goalsOf(site.site_id).map((g) => g.id)
          if (pairs + (ids.length * (ids.length - 1)) / 2 <= MAX_WARM_PAIRS) pairs += (await inMemory(() => warmPairs(state, ids))) ?? 0
          // the dashboard's windows of more than a day: their past days' sessions per value, for breakdowns
          // and the corrections of the goals lately broken down, for every attribute
          if (ids.length > 0) {
            for (const days of [7, 30]) {
              const w = windowOf(site, days)
              await inMemory(() => warmSessionsPerValue(state, site.site_id, w))
              await inMemory(() => warmSettledCorrections(state, ids, w, lookup))
            }
          }
          for (const f of catalog.funnelsOf(site.site_id)) {
            const days = state.goals.get(f.steps[0])?.days() ?? []
            if (days.length === 0) continue
            const q = { kind: 'funnel' as const, site_id: site.site_id, steps: f.steps, window_ms: f.window_minutes * 60_000, window: { from: days[0], to: days[days.length - 1] } }
            // the days a day at a time (settled ones read back for their walk), then the whole
            // window's corrections where its days are in memory
            await inMemory(() => warmFunnel(state, q))
            await inMemory(() => funnelByDays(state, q))
          }
        }
      }
    } finally {
      this.#warming = false
    }
  }

  /** Warms now, then every `everyMs`; returns a function that stops it. */
  startWarming(everyMs: number, onError: (err: unknown) => void): () => void {
    const run = () => void this.warm().catch(onError)
    const timer = setInterval(run, everyMs)
    timer.unref()
    run()
    return () => clearInterval(timer)
  }

  /** How many sessions reach each step of a funnel, in order, over a window. */
  async funnelReport(funnel: Funnel, site: Site, days: number, now = Date.now()): Promise<FunnelReport> {
    const window = windowOf(site, days, now)
    const { catalog } = this.#o
    const partials = await this.gather({ kind: 'funnel', site_id: site.site_id, steps: funnel.steps, window_ms: funnel.window_minutes * 60_000, window })
    const goals = funnel.steps.map((id) => catalog.goals.get(id))
    return funnelBody(funnel, goals, days, window, mergeFunnels(partials as FunnelPartial[], funnel.steps.length))
  }

  /** Every partition's owner, offsets and state size. */
  async status(): Promise<PartitionStatus[]> {
    const partials = (await this.gather({ kind: 'status' })) as { partitions: PartitionStatus[] }[]
    return partials.flatMap((p) => p.partitions).sort((a, b) => a.partition - b.partition)
  }
}

/**
 * Why a partition this node owns has no task to answer from — it is being restored, or its folding
 * stopped — or undefined when it is not this node's (its owner is asked).
 */
function heldReason(processor: StreamProcessor, p: number): string | undefined {
  if (processor.tasks.has(p)) return undefined
  const stop = processor.stopOf(p)
  if (stop) return stoppedReason(stop)
  if (processor.restoring(p)) return 'is restoring its state (from the changelog and the log)'
  return undefined
}

const stoppedReason = (stop: PartitionStop): string => `is stopped at offset ${stop.offset} of ${stop.topic}: ${stop.reason}`

/** Why a held partition's answer to `query` would not be complete yet, or undefined when it would be. */
function unreadyReason(task: PartitionTask, query: PartialQuery, catalog: Catalog): string | undefined {
  if (!task.caughtUp) {
    const { offset, end } = task.catchUp
    return `is catching up with the log (offset ${offset} of ${end})`
  }
  if (task.stalled !== undefined) return `keeps failing to fold: ${task.stalled instanceof Error ? task.stalled.message : JSON.stringify(task.stalled)}`
  const siteId = query.kind === 'sessions' ? catalog.goals.get(query.goal_id)?.site_id : query.site_id
  if (siteId !== undefined && query.kind !== 'suggestions' && task.rebucketing(siteId)) return `is rebuilding site ${siteId}'s days in its new time zone`
  const counting = goalsOf(query).find((id) => task.backfilling(id) !== undefined)
  if (counting !== undefined) return `is still counting goal ${counting} over the retained log`
  return undefined
}

/**
 * Computes a partial per partition, letting other work run between them, and merges them; each
 * reads back the settled days it meets in the store only (stream/settled-days.ts).
 */
async function perPartition<P>(states: PartitionState[], one: (state: PartitionState) => P | Promise<P>, merge: (partials: P[]) => P): Promise<P> {
  const partials: P[] = []
  for (const state of states) {
    if (partials.length > 0) await new Promise<void>((resolve) => setImmediate(resolve))
    partials.push(await readingSettled([state], () => one(state)))
  }
  return merge(partials)
}

/**
 * Warms what the days in memory allow: a settled day in the store only is not read back for it
 * (a question reads it back; what was warmed before it left stays valid under its stamps).
 */
async function inMemory<T>(warm: () => Promise<T>): Promise<T | undefined> {
  try {
    return await warm()
  } catch (err) {
    if (err instanceof DaysNotLoaded) return undefined
    throw err
  }
}

/** the goals a query reads */
function goalsOf(query: PartialQuery): string[] {
  switch (query.kind) {
    case 'goals': return query.goal_ids
    case 'sessions': case 'report': case 'breakdown': return [query.goal_id]
    case 'overlap': return [query.a, query.b]
    case 'funnel': return query.steps
    case 'suggestions': return []
  }
}

/** "partition 1 is catching up …; partitions 2, 3 have no owner …", grouped by reason */
function describe(partitions: number[], why: Map<number, string>): string {
  const byReason = new Map<string, number[]>()
  for (const p of [...new Set(partitions)].sort((a, b) => a - b)) {
    const reason = why.get(p) ?? 'has no owner answering right now (the group is rebalancing)'
    byReason.set(reason, [...(byReason.get(reason) ?? []), p])
  }
  return [...byReason].map(([reason, ps]) => `partition ${ps.join(', ')} ${reason}`).join('; ') + '; nothing partial is answered, try again shortly'
}
