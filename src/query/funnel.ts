/**
 * A funnel's report: how many sessions reach each step in order. A session enters at its first
 * completion of step 1 dated in the window; it reaches step k at its first completion of step k at
 * or after the time it reached step k − 1, and no later than the funnel's window after it entered.
 * Each owner takes its partition a part of the hash space at a time (parts.ts): the part's
 * entering sessions go into a small table, then each further step's completions of the part are
 * matched against it, step by step. Sessions never span partitions, so the per-step counts add up
 * exactly.
 */
import type { Funnel, FunnelReport, Goal, PartialQuery } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { dayTimeBase, formatDay, type GoalDays } from '../goals/index.js'
import { U64Map, Words } from '../sketch/index.js'
import { partitionSessions, type Window } from './partials.js'
import { partBits, runAll, type PartedQuery } from './parts.js'

type FunnelQuery = Extract<PartialQuery, { kind: 'funnel' }>

export interface FunnelPartial {
  total_sessions: number
  /** sessions reaching each step */
  steps: number[]
}

/**
 * One partition's funnel, in parts; `goals`: the steps' sets to read, if taken already;
 * `withSessions`: whether to count the window's sessions too; `parts`: the bits of the parts, when
 * the caller needs given ones.
 */
/**
 * The steps' goals of this partition, in order (undefined: none here). Built by push, a packed
 * array like overlap's pair: `map` makes a holey one, and the code both share (day-joins.ts) was
 * optimised for one kind and thrown away at the other, some hundred questions in — a cascade of
 * deoptimisations and two slow questions.
 */
export function stepGoals(state: PartitionState, steps: readonly string[]): (GoalDays | undefined)[] {
  const out: (GoalDays | undefined)[] = []
  for (const id of steps) out.push(state.goals.get(id))
  return out
}

export function funnelParts(
  state: PartitionState, q: FunnelQuery, goals = stepGoals(state, q.steps), withSessions = true, parts?: number,
): PartedQuery<FunnelPartial> {
  const n = q.steps.length
  const sessions = withSessions ? partitionSessions(state, q.site_id, q.window) : 0
  const out: FunnelPartial = { total_sessions: sessions, steps: new Array<number>(n).fill(0) }
  const { from, to } = q.window
  const entry = goals[0]
  const sizes = goals.map((g) => g?.entriesIn(from, to) ?? 0)
  const bits = parts ?? partBits(Math.max(...sizes))
  const entered = new U64Map((1.5 * sizes[0]) / 2 ** bits, bits)
  // per entering session of the part, by its index in `entered`: the step it reached and when,
  // when it entered, and its first completion of the next step found so far
  let lanes = newLanes(0)
  let count = 0
  const words = new Words()
  return {
    bits,
    step(part) {
      if (entry === undefined) return
      entered.clear()
      count = 0
      entry.partInto(from, to, part, bits, words)
      let w = words.data
      for (let j = 0; j < words.length; j += 4) {
        const ts = dayTimeBase(w[j + 3]) + w[j + 2]
        const i = entered.get(w[j], w[j + 1])
        if (i !== undefined) {
          if (ts < lanes.at[i]) lanes.at[i] = lanes.entered[i] = ts
          continue
        }
        if (count === lanes.at.length) lanes = grown(lanes)
        entered.set(w[j], w[j + 1], count)
        lanes.reached[count] = 0
        lanes.at[count] = lanes.entered[count] = ts
        count++
      }
      out.steps[0] += count
      let alive = count
      for (let k = 1; k < n && alive > 0; k++) {
        const goal = goals[k]
        if (goal === undefined) break
        const { reached, at, entered: start, next } = lanes
        next.fill(Infinity, 0, count)
        goal.partInto(from, to, part, bits, words)
        w = words.data
        for (let j = 0; j < words.length; j += 4) {
          const i = entered.get(w[j], w[j + 1])
          if (i === undefined || reached[i] !== k - 1) continue
          const day = w[j + 3]
          const ts = goal.completionFrom(w[j], w[j + 1], day, dayTimeBase(day) + w[j + 2], at[i])
          if (ts !== undefined && ts < next[i] && ts <= start[i] + q.window_ms) next[i] = ts
        }
        alive = 0
        for (let i = 0; i < count; i++) {
          if (reached[i] !== k - 1 || next[i] === Infinity) continue
          reached[i] = k
          at[i] = next[i]
          alive++
        }
        out.steps[k] += alive
      }
    },
    result: () => out,
  }
}

interface Lanes {
  reached: Int8Array
  entered: Float64Array
  at: Float64Array
  next: Float64Array
}

function newLanes(n: number): Lanes {
  return { reached: new Int8Array(n), entered: new Float64Array(n), at: new Float64Array(n), next: new Float64Array(n) }
}

function grown(l: Lanes): Lanes {
  const g = newLanes(Math.max(1024, 2 * l.at.length))
  g.reached.set(l.reached)
  g.entered.set(l.entered)
  g.at.set(l.at)
  g.next.set(l.next)
  return g
}

/** The funnel of some partitions, computed at once. */
export function funnelPartial(parts: Iterable<PartitionState>, q: FunnelQuery): FunnelPartial {
  return mergeFunnels([...parts].map((state) => runAll(funnelParts(state, q))), q.steps.length)
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
