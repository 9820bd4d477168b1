/**
 * Answers queries over every partition of the topic, wherever the partitions are: partials from
 * the tasks held here, and from each other partition's owner over HTTP (Kafka Streams'
 * interactive queries, with group membership as the directory). The merged answer is exactly
 * what one node owning every partition would say.
 */
import type { Catalog } from '../catalog/index.js'
import type { Goal, GoalList, SessionList, Site, Suggestions } from '../schema/api.js'
import type { StreamProcessor } from './processor.js'
import type { PartitionTask } from './partition-task.js'
import {
  goalsPartial, mergeGoals, mergeSessions, mergeSuggestions, sessionsPartial, suggestionsPartial,
  type GoalsPartial, type Partial, type PartialQuery, type SessionsPartial, type SuggestionsPartial,
} from './partials.js'
import { goalListBody, retainedFrom, sessionListBody, suggestionsBody, windowOf, type Cursor } from './queries.js'

export interface PartitionStatus {
  partition: number
  owner: string
  offset: number
  end: number
  lag: number
  hot_sessions: number
  goals: number
  conversions: number
  state_bytes: number
}

export type StatusQuery = { kind: 'status' }
export type AnyQuery = PartialQuery | StatusQuery
export type AnyPartial = Partial | { partitions: PartitionStatus[] }

/** What a node answers for some partitions: one partial over those it owns, and those it does not. */
export interface PartialAnswer {
  partials: AnyPartial[]
  missing: number[]
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

  constructor(opts: QueryOptions) {
    this.#o = opts
  }

  /** The partials of the given partitions that are held here; the rest come back as missing. */
  async local(query: AnyQuery, partitions: number[]): Promise<PartialAnswer> {
    const { processor, catalog } = this.#o
    // a partition still catching up with the log (just taken over) would answer less than its previous owner did
    const answers = (tasks: ReadonlyMap<number, PartitionTask>, p: number): boolean =>
      query.kind === 'status' ? tasks.has(p) : tasks.get(p)?.caughtUp === true
    if (!partitions.some((p) => answers(processor.tasks, p))) return { partials: [], missing: partitions }
    if (query.kind === 'goals') {
      // a goal created on another node may not be here yet; once it is, its backfill has started
      if (query.goal_ids.some((id) => !catalog.goals.has(id))) await catalog.sync()
      await Promise.all(query.goal_ids.map((id) => processor.whenBackfilled(id, this.#o.backfillWaitMs ?? 5000)))
    }
    // decided after the awaits, from one view of the tasks: tasks come and go meanwhile
    const tasks = processor.tasks
    const held = partitions.filter((p) => answers(tasks, p))
    const missing = partitions.filter((p) => !answers(tasks, p))
    if (held.length === 0) return { partials: [], missing }
    const states = held.map((p) => tasks.get(p)!.state)
    let partial: AnyPartial
    switch (query.kind) {
      case 'goals': partial = goalsPartial(states, query); break
      case 'sessions': partial = await sessionsPartial(states, (p, hks) => processor.summaries(p, hks), query); break
      case 'suggestions': partial = suggestionsPartial(states, query); break
      case 'status': partial = { partitions: await this.#status(held) }; break
    }
    return { partials: [partial], missing }
  }

  async #status(partitions: number[]): Promise<PartitionStatus[]> {
    const lag = await this.#o.processor.lag()
    return partitions.flatMap((p) => {
      const task = this.#o.processor.tasks.get(p)
      if (!task) return []
      const { state } = task
      const at = lag.get(p) ?? { offset: state.offset, end: state.offset }
      let conversions = 0
      let goalBytes = 0
      for (const g of state.goals.values()) {
        conversions += g.size
        goalBytes += g.memoryBytes()
      }
      return [{
        partition: p, owner: this.#o.self, offset: at.offset, end: at.end, lag: Math.max(0, at.end - at.offset),
        hot_sessions: state.summaries.size, goals: state.goals.size, conversions, state_bytes: goalBytes + state.summaries.memoryBytes(),
      }]
    })
  }

  /** Partials covering every partition: local ones, then each remaining partition's owner. */
  async gather(query: AnyQuery): Promise<AnyPartial[]> {
    const { processor, remote } = this.#o
    let need = Array.from({ length: processor.partitions }, (_, p) => p)
    const out: AnyPartial[] = []
    const deadline = Date.now() + (this.#o.deadlineMs ?? 10_000)
    for (;;) {
      const here = await this.local(query, need)
      out.push(...here.partials)
      need = here.missing
      if (need.length === 0) return out
      const membership = processor.membership
      if (remote && membership) {
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
            return ps.filter((p) => !answer.missing.includes(p))
          } catch {
            return []
          }
        }))
        const done = new Set(answered.flat())
        need = need.filter((p) => !done.has(p))
        if (need.length === 0) return out
      }
      if (Date.now() > deadline) throw new PartitionsUnavailable(`partition ${need.join(', ')} has no owner answering right now (the group is rebalancing)`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  async goalList(site: Site, goals: Goal[], days: number, now = Date.now()): Promise<GoalList> {
    const window = windowOf(site, days, now)
    const partials = await this.gather({ kind: 'goals', site_id: site.site_id, window, goal_ids: goals.map((g) => g.id) })
    return goalListBody(site, goals, days, window, mergeGoals(partials as GoalsPartial[]))
  }

  async goalSessions(goal: Goal, site: Site, days: number, limit: number, cursor: Cursor | null, now = Date.now()): Promise<SessionList> {
    const window = windowOf(site, days, now)
    const partials = await this.gather({ kind: 'sessions', goal_id: goal.id, window, limit, cursor_ts: cursor?.ts ?? null })
    return sessionListBody(goal, days, limit, cursor, mergeSessions(partials as SessionsPartial[]))
  }

  async suggestions(site: Site, of: 'path' | 'event', prefix: string, limit: number, retentionDays: number, now = Date.now()): Promise<Suggestions> {
    const partials = await this.gather({ kind: 'suggestions', site_id: site.site_id, of, prefix, min_day: retainedFrom(site, retentionDays, now) })
    return suggestionsBody(mergeSuggestions(partials as SuggestionsPartial[]), limit)
  }

  /** Every partition's owner, offsets and state size. */
  async status(): Promise<PartitionStatus[]> {
    const partials = (await this.gather({ kind: 'status' })) as { partitions: PartitionStatus[] }[]
    return partials.flatMap((p) => p.partitions).sort((a, b) => a.partition - b.partition)
  }
}
