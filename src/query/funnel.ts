/**
 * A funnel's report: how many sessions reach each step in order. A session enters at its first
 * completion of step 1 dated in the window; it reaches step k at its first completion of step k at
 * or after the time it reached step k − 1, and no later than the funnel's window after it entered.
 * Each owner follows its partitions' sessions through the steps' goal days (and their further
 * completion times); sessions never span partitions, so the per-step counts add up exactly.
 */
import type { Funnel, FunnelReport, Goal, PartialQuery } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { formatDay } from '../goals/index.js'
import { partitionSessions, type Window } from './partials.js'

type FunnelQuery = Extract<PartialQuery, { kind: 'funnel' }>

export interface FunnelPartial {
  total_sessions: number
  /** sessions reaching each step */
  steps: number[]
}

export function funnelPartial(parts: Iterable<PartitionState>, q: FunnelQuery): FunnelPartial {
  const n = q.steps.length
  const out: FunnelPartial = { total_sessions: 0, steps: new Array<number>(n).fill(0) }
  const { from, to } = q.window
  for (const state of parts) {
    out.total_sessions += partitionSessions(state, q.site_id, q.window)
    const goals = q.steps.map((id) => state.goals.get(id))
    const entry = goals[0]
    if (entry === undefined) continue
    entry.forEachIn(from, to, (hi, lo, entered) => {
      out.steps[0]++
      const until = entered + q.window_ms
      let at = entered
      for (let k = 1; k < n; k++) {
        const next = goals[k]?.firstCompletion(hi, lo, at, until, from, to)
        if (next === undefined) return
        out.steps[k]++
        at = next
      }
    })
  }
  return out
}

export function mergeFunnels(partials: FunnelPartial[], steps: number): FunnelPartial {
  const out: FunnelPartial = { total_sessions: 0, steps: new Array<number>(steps).fill(0) }
  for (const p of partials) {
    out.total_sessions += p.total_sessions
    for (let k = 0; k < steps; k++) out.steps[k] += p.steps[k] ?? 0
  }
  return out
}

export function funnelBody(funnel: Funnel, goals: (Goal | undefined)[], days: number, w: Window, merged: FunnelPartial): FunnelReport {
  const total = merged.total_sessions
  return {
    funnel,
    days,
    from: formatDay(w.from),
    to: formatDay(w.to),
    total_sessions: total,
    steps: funnel.steps.map((goalId, k) => {
      const sessions = merged.steps[k]
      const previous = k === 0 ? sessions : merged.steps[k - 1]
      return {
        goal_id: goalId,
        name: goals[k]?.name ?? goalId,
        sessions,
        conversion_rate: total === 0 ? 0 : sessions / total,
        from_previous: k === 0 ? 1 : previous === 0 ? 0 : sessions / previous,
        drop_off: k === 0 ? 0 : previous - sessions,
      }
    }),
  }
}
