/**
 * Interactive queries in two halves (Kafka Streams' pattern): each partition's owner computes a
 * partial result from its own state, and whoever was asked merges the partials. Sessions never
 * span partitions, so partials add up exactly: a merged answer equals the answer of one node that
 * owned every partition. Partials are plain JSON, so they travel between nodes unchanged.
 */
import { SessionCounter } from '../sketch/index.js'
import type { PartitionState, SiteState } from '../stream/index.js'
import { hashKey } from '../sketch/index.js'
import type { PartialQuery, SessionSummary, Window } from '../schema/index.js'

/** A window as local day numbers, fixed by the node that was asked so every owner uses the same days. */
export type { PartialQuery, Window } from '../schema/index.js'

/** A goal's revenue in some partitions: the total in 1/10 000 units as decimal text (JSON has no BigInt). */
export interface RevenuePartial {
  units: string
  events: number
  other: number
}

export interface GoalsPartial {
  total_sessions: number
  conversions: Record<string, number>
  /** goals with a currency only; absent in partials of nodes that predate revenue */
  revenue?: Record<string, RevenuePartial>
}

export interface SessionRow {
  ts: number
  summary: SessionSummary
}

export interface SessionsPartial {
  conversions: number
  rows: SessionRow[]
}

export interface SuggestionsPartial {
  values: [string, number][]
}

export type Partial = GoalsPartial | SessionsPartial | SuggestionsPartial

export type SummaryLookup = (partition: number, hks: string[]) => Promise<(SessionSummary | undefined)[]>

/**
 * Distinct sessions of a site in one partition over a window: a union of per-day counters. The
 * union of the window's earlier days is cached until one of them changes, so a dashboard polling
 * while events arrive pays for one day, not the whole window.
 */
export function partitionSessions(state: PartitionState, siteId: string, w: Window): number {
  const site = state.sites.get(siteId)
  if (!site) return 0
  const last = site.days.get(w.to)
  if (w.from === w.to) return last?.count() ?? 0
  const past = pastUnion(site, w, state.exactThreshold)
  return last ? SessionCounter.union([past, last]) : past.count()
}

function pastUnion(site: SiteState, w: Window, threshold: number): SessionCounter {
  const key = `${w.from}:${w.to}`
  const cached = site.past.get(key)
  if (cached) {
    let fresh = true
    for (let day = w.from; day < w.to && fresh; day++) fresh = (site.changedAt.get(day) ?? 0) <= cached.at
    if (fresh) return cached.union
  }
  const union = new SessionCounter(threshold)
  for (const [day, c] of site.days) if (day >= w.from && day < w.to) union.mergeFrom(c)
  site.past.set(key, { at: site.changes, union })
  return union
}

export function goalsPartial(parts: Iterable<PartitionState>, q: Extract<PartialQuery, { kind: 'goals' }>): GoalsPartial {
  const out: GoalsPartial = { total_sessions: 0, conversions: {}, revenue: {} }
  const revenue = new Map<string, { units: bigint; events: number; other: number }>()
  for (const id of q.goal_ids) out.conversions[id] = 0
  for (const state of parts) {
    out.total_sessions += partitionSessions(state, q.site_id, q.window)
    for (const id of q.goal_ids) out.conversions[id] += state.goals.get(id)?.conversions(q.window.from, q.window.to) ?? 0
    // sessions never span partitions, so neither does an event's identity: partition sums are exact
    if (state.revenue.size === 0) continue
    for (const id of q.goal_ids) {
      const r = state.revenue.get(id)
      if (!r) continue
      const t = r.totals(q.window.from, q.window.to)
      const sum = revenue.get(id) ?? { units: 0n, events: 0, other: 0 }
      revenue.set(id, { units: sum.units + t.total, events: sum.events + t.events, other: sum.other + t.other })
    }
  }
  for (const [id, r] of revenue) out.revenue![id] = { units: String(r.units), events: r.events, other: r.other }
  return out
}

/** Up to limit + 1 rows per partition from the cursor on (and every tie at the cursor's time). */
export async function sessionsPartial(
  parts: Iterable<PartitionState>, lookup: SummaryLookup, q: Extract<PartialQuery, { kind: 'sessions' }>,
): Promise<SessionsPartial> {
  const out: SessionsPartial = { conversions: 0, rows: [] }
  for (const state of parts) {
    const g = state.goals.get(q.goal_id)
    if (!g) continue
    out.conversions += g.conversions(q.window.from, q.window.to)
    const found = g.candidates(q.window.from, q.window.to, q.limit + 1, q.cursor_ts ?? undefined)
    const summaries = await lookup(state.partition, found.map((c) => hashKey(c.hi, c.lo)))
    found.forEach((c, i) => {
      const summary = summaries[i]
      if (summary) out.rows.push({ ts: c.ts, summary })
    })
  }
  return out
}

export function suggestionsPartial(parts: Iterable<PartitionState>, q: Extract<PartialQuery, { kind: 'suggestions' }>): SuggestionsPartial {
  const merged = new Map<string, number>()
  for (const state of parts) {
    const s = state.sites.get(q.site_id)
    if (!s) continue
    const top = (q.of === 'path' ? s.paths : s.events).top(Infinity, { prefix: q.prefix, minDay: q.min_day })
    for (const { value, count } of top) merged.set(value, (merged.get(value) ?? 0) + count)
  }
  return { values: [...merged] }
}

export function mergeGoals(partials: GoalsPartial[]): GoalsPartial {
  const out: GoalsPartial = { total_sessions: 0, conversions: {}, revenue: {} }
  for (const p of partials) {
    out.total_sessions += p.total_sessions
    for (const [id, n] of Object.entries(p.conversions)) out.conversions[id] = (out.conversions[id] ?? 0) + n
    for (const [id, r] of Object.entries(p.revenue ?? {})) out.revenue![id] = addRevenue(out.revenue![id], r)
  }
  return out
}

/** The sum of two revenue partials, exact. */
export function addRevenue(a: RevenuePartial | undefined, b: RevenuePartial): RevenuePartial {
  if (!a) return { ...b }
  return { units: String(BigInt(a.units) + BigInt(b.units)), events: a.events + b.events, other: a.other + b.other }
}

export function mergeSessions(partials: SessionsPartial[]): SessionsPartial {
  return { conversions: partials.reduce((n, p) => n + p.conversions, 0), rows: partials.flatMap((p) => p.rows) }
}

export function mergeSuggestions(partials: SuggestionsPartial[]): SuggestionsPartial {
  const merged = new Map<string, number>()
  for (const p of partials) for (const [value, n] of p.values) merged.set(value, (merged.get(value) ?? 0) + n)
  return { values: [...merged] }
}
