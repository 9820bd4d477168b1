/**
 * A site's sessions per value of a breakdown's attribute over a window (docs/api.md §9.4), from
 * the value counters the fold keeps per site, day and combination of values, with the union of
 * the window's past days kept between questions.
 */
import { LRUCache } from 'lru-cache'
import { BREAKDOWN_DIMENSIONS } from '../schema/index.js'
import type { PartitionState, SiteState } from '../stream/index.js'
import { dimensionIndex, groupOf, valueInCombination } from '../stream/index.js'
import { RunningUnion, SessionCounter } from '../sketch/index.js'
import { Turns } from './parts.js'

/**
 * A site's sessions per value over a window: per value, the union of its combinations' counters
 * over the window's days (a session is in one combination of a group, so the union is exact while
 * the counters are). The union of the days before the last is kept, built in turns of the event
 * loop; a day that gained sessions since is merged into it again, and one where a session moved
 * to another value (SiteState.movedAt) makes it build anew. Then, at once: the last day's counters
 * united with it — exactly while under the exact threshold, else merged into a kept sketch of the
 * past (RunningUnion) — and a value whose last-day counters are unchanged answers as before.
 */
export async function sessionsPerValue(site: SiteState, d: number, w: { from: number; to: number }, threshold: number, turns: Turns): Promise<Map<string | null, number>> {
  let kept = pastValues.get(site)
  if (kept === undefined) pastValues.set(site, (kept = new LRUCache({ max: PAST_WINDOWS })))
  const key = `${d}:${w.from}:${w.to}`
  let past = kept.get(key)
  if (past === undefined || !current(site, w, past)) {
    // a session moved meanwhile on one of the days: built again, the last time at once
    for (let tries = 0; ; tries++) {
      past = await pastOf(site, d, w, threshold, tries < 3 ? turns : undefined)
      if (current(site, w, past)) break
    }
    kept.set(key, past)
  }
  // synchronous from here: the days that gained sessions, then the last day
  const p = past
  for (let day = w.from; day < w.to; day++) {
    if ((site.changedAt.get(day) ?? 0) <= p.at) continue
    for (const [value, counters] of countersOf(site, d, day)) {
      let union = p.unions.get(value)
      if (union === undefined) p.unions.set(value, (union = new SessionCounter(threshold)))
      for (const c of counters) union.mergeFrom(c)
      p.running.delete(value)
      p.last.delete(value)
    }
  }
  p.at = site.changes
  const lastDay = countersOf(site, d, w.to)
  const out = new Map<string | null, number>()
  for (const [value, union] of p.unions) {
    const today = lastDay.get(value)
    if (today === undefined) {
      out.set(value, union.count())
      continue
    }
    // today's counters as they were when last united with the past: unchanged, so is the union
    let changes = today.length
    for (const c of today) changes += c.changes
    const last = p.last.get(value)
    if (last?.changes === changes) out.set(value, last.n)
    else if (union.isExact && today.every((c) => c.isExact) && !p.sketched.has(value)) {
      const n = SessionCounter.union([union, ...today])
      out.set(value, n)
      // past the threshold the union is a sketch, and only grows: from now on, a running one
      if (n > threshold) p.sketched.add(value)
    }
    else {
      // a sketch already: the past's registers are kept, and today's merged into them as it grows
      let running = p.running.get(value)
      if (running === undefined) {
        p.running.set(value, (running = new RunningUnion()))
        running.merge(union)
      }
      for (const c of today) running.merge(c)
      out.set(value, Math.round(running.estimate()))
    }
    p.last.set(value, { changes, n: out.get(value)! })
  }
  for (const [value, counters] of lastDay) if (!p.unions.has(value)) out.set(value, SessionCounter.union(counters))
  return out
}

/** Whether a kept union of past days can be brought up to date by merging: no day cleared, and no session moved. */
function current(site: SiteState, w: { from: number; to: number }, past: PastValues): boolean {
  let held = 0
  for (let day = w.from; day < w.to; day++) {
    if (site.values.has(day)) held++
    if ((site.movedAt.get(day) ?? 0) > past.at) return false
  }
  // a site's days rebuilt in a new zone start again from none
  return held === past.held
}

/** The union of each value's counters over the window's days but the last, in `turns` (none: at once). */
async function pastOf(site: SiteState, d: number, w: { from: number; to: number }, threshold: number, turns: Turns | undefined): Promise<PastValues> {
  const at = site.changes
  let held = 0
  const unions = new Map<string | null, SessionCounter>()
  for (let day = w.from; day < w.to; day++) {
    if (site.values.has(day)) held++
    for (const [value, counters] of countersOf(site, d, day)) {
      let union = unions.get(value)
      if (union === undefined) unions.set(value, (union = new SessionCounter(threshold)))
      for (const c of counters) union.mergeFrom(c)
      if (turns?.due) await turns.next()
    }
  }
  return { at, held, unions, running: new Map(), last: new Map(), sketched: new Set() }
}

/** A day's counters of one dimension by value (the combinations of its group that hold the value). */
function countersOf(site: SiteState, d: number, day: number): Map<string | null, SessionCounter[]> {
  const out = new Map<string | null, SessionCounter[]>()
  site.values.get(day)?.[groupOf(d)].forEach((combination, counter) => {
    const value = valueInCombination(d, combination)
    const list = out.get(value)
    if (list) list.push(counter)
    else out.set(value, [counter])
  })
  return out
}

/**
 * Builds the kept unions of the site's sessions per value for a window, for every dimension, in
 * turns: what a dashboard's first breakdown of the window would otherwise wait for.
 */
export async function warmSessionsPerValue(state: PartitionState, siteId: string, w: { from: number; to: number }): Promise<void> {
  const site = state.sites.get(siteId)
  if (site === undefined || w.from === w.to) return
  const turns = new Turns()
  for (const by of BREAKDOWN_DIMENSIONS) await sessionsPerValue(site, dimensionIndex(by), w, state.exactThreshold, turns)
}

/** per site, unions of the window's days but its last, per dimension and window */
const pastValues = new WeakMap<SiteState, LRUCache<string, PastValues>>()

interface PastValues {
  /** site.changes when united, and how many of the days held counters */
  at: number
  held: number
  /** per value, its sessions over the window's days but the last */
  unions: Map<string | null, SessionCounter>
  /** per value whose union is a sketch, the union with the last day's counters merged in as they grow */
  running: Map<string | null, RunningUnion>
  /** per value, its answer with the last day, and the sum of the last day's counters' changes then */
  last: Map<string | null, { changes: number; n: number }>
  /** values whose exact union with the last day went past the exact threshold */
  sketched: Set<string | null>
}
/** dashboards ask a few windows of a few dimensions */
const PAST_WINDOWS = 32

