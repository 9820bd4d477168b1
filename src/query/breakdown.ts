/**
 * One goal's conversions broken down by a session attribute (docs/api.md §9.4). Conversions are
 * exact: the fold counts each goal's conversions of a day by the sessions' attribute values
 * (goals/value-tallies.ts), and a partition adds up the window's days, less the sessions counted
 * on several of them. While a partition's counts are being built (after a restore or a replay), it
 * walks the goal's sessions of the window instead (a part of the hash space at a time, parts.ts)
 * and reads each one's attributes from the session table or its stored summary
 * (counted-conversions.ts). Sessions per value come from the per-day value counters the fold keeps,
 * united over the window (value-sessions.ts). Sessions never span partitions, so partials add up.
 */
import type { BreakdownDimension, GoalBreakdown, PartialQuery } from '../schema/index.js'
import { BREAKDOWN_DIMENSIONS } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { dimensionIndex, summaryAttributes } from '../stream/index.js'
import { hashKey } from '../sketch/index.js'
import { countedConversions } from './counted-conversions.js'
import { partitionSessions, type SummaryLookup } from './partials.js'
import { Turns, eachSession, runInSlices } from './parts.js'
import { sessionsPerValue } from './value-sessions.js'

type BreakdownQuery = Extract<PartialQuery, { kind: 'breakdown' }>

/** stored summaries read per store call */
const COLD_SLICE = 4096

/** [value, sessions, conversions] */
export type ValueCount = [string | null, number, number]

export interface BreakdownPartial {
  total_sessions: number
  conversions: number
  values: ValueCount[]
}

/** The breakdown of one partition. Awaits the store for sessions no longer in memory. */
export async function breakdownPartial(state: PartitionState, q: BreakdownQuery, lookup: SummaryLookup): Promise<BreakdownPartial> {
  const d = dimensionIndex(q.by)
  const { from, to } = q.window
  const counts = new Map<string | null, [number, number]>()
  const entry = (value: string | null): [number, number] => {
    let c = counts.get(value)
    if (!c) counts.set(value, (c = [0, 0]))
    return c
  }
  const total = partitionSessions(state, q.site_id, q.window)

  const site = state.sites.get(q.site_id)
  if (site) for (const [value, n] of await sessionsPerValue(site, d, q.window, state.exactThreshold, new Turns())) if (n > 0) entry(value)[0] = n

  let conversions = 0
  const goal = state.goals.get(q.goal_id)
  const byValue = goal === undefined ? undefined : await countedConversions(state, goal, q, d, lookup)
  if (goal !== undefined && byValue !== undefined) {
    conversions = goal.conversions(from, to)
    for (const [value, n] of byValue) if (n !== 0) entry(value)[1] = n
  } else if (goal) {
    const table = state.summaries
    const values = new Array<string | null>(BREAKDOWN_DIMENSIONS.length)
    const cold: string[] = []
    // a part of the sessions at a time (parts.ts), letting folds run between parts
    await runInSlices(eachSession(goal, from, to, (hi, lo) => {
      conversions++
      const slot = table.slotOf(hi, lo)
      if (slot >= 0) entry(table.attributeAt(slot, d))[1]++
      else cold.push(hashKey(hi, lo))
    }))
    // in slices, so that a goal with many sessions out of memory never holds the event loop or
    // reads them all at once; the walk above fixed which sessions count, and a session whose
    // attributes a fold changes meanwhile shows its new value (the next query would too)
    for (let i = 0; i < cold.length; i += COLD_SLICE) {
      const stored = await lookup(state.partition, cold.slice(i, i + COLD_SLICE))
      for (const s of stored) entry(s ? summaryAttributes(s, values)[d] : null)[1]++
    }
  }
  return { total_sessions: total, conversions, values: [...counts].map(([value, [sessions, conv]]) => [value, sessions, conv]) }
}
export function mergeBreakdowns(partials: BreakdownPartial[]): BreakdownPartial {
  const counts = new Map<string | null, [number, number]>()
  let total = 0
  let conversions = 0
  for (const p of partials) {
    total += p.total_sessions
    conversions += p.conversions
    for (const [value, sessions, conv] of p.values) {
      const c = counts.get(value)
      if (c) {
        c[0] += sessions
        c[1] += conv
      } else counts.set(value, [sessions, conv])
    }
  }
  return { total_sessions: total, conversions, values: [...counts].map(([value, [sessions, conv]]) => [value, sessions, conv]) }
}

/** Most conversions first; ties by value, null last among its ties. */
export function byConversions(a: ValueCount, b: ValueCount): number {
  if (a[2] !== b[2]) return b[2] - a[2]
  if (a[0] === b[0]) return 0
  if (a[0] === null) return 1
  if (b[0] === null) return -1
  return a[0] < b[0] ? -1 : 1
}

const rate = (n: number, of: number): number => (of === 0 ? 0 : n / of)

export function breakdownBody(goalId: string, days: number, by: BreakdownDimension, limit: number, merged: BreakdownPartial): GoalBreakdown {
  const ranked = merged.values.filter((v) => v[2] > 0).sort(byConversions)
  const top = ranked.slice(0, limit)
  const shown = new Set(top.map((v) => v[0]))
  let otherSessions = 0
  let otherConversions = 0
  let others = 0
  for (const [value, sessions, conv] of merged.values) {
    if (shown.has(value)) continue
    others++
    otherSessions += sessions
    otherConversions += conv
  }
  return {
    goal_id: goalId,
    days,
    by,
    total_sessions: merged.total_sessions,
    conversions: merged.conversions,
    rows: top.map(([value, sessions, conversions]) => ({ value, sessions, conversions, conversion_rate: rate(conversions, sessions) })),
    other: others === 0 ? null : { sessions: otherSessions, conversions: otherConversions },
  }
}
