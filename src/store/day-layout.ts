/**
 * How a goal's day lies in the store (and its hours, its days' completion times and its multi-day
 * index, alike): a base (the whole set when it was last written whole) and deltas, one per
 * snapshot that changed it, holding only the sessions it changed. A set is the join of its parts.
 * Writing the whole set on every change cost O(conversions of the day) per snapshot: 70 ms of
 * encoding per goal at 150 k conversions, growing all day, and an hour of a busy goal the same
 * within the hour. A delta costs O(what changed); the set is written whole
 * again once its deltas hold as many entries as the base (so whole writes stay amortized O(1) per
 * entry) or reach MAX_DELTAS (so a restore reads a bounded number).
 */
export interface DayLayout {
  base: number
  deltas: number[]
  deltaEntries: number
}
/** layouts by goal, then by day (or `hourKey`) */
export type GoalLayouts = Map<string, Map<number, DayLayout>>
/** a partition's layouts of its goals' days, hours, completion times and multi-day indexes (at 0), and the number its next delta takes */
export interface Layouts {
  days: GoalLayouts
  hours: GoalLayouts
  times: GoalLayouts
  multi: GoalLayouts
  seq: number
}
/**
 * Deltas a set may have before it is written whole again. Under load a partition snapshots every
 * couple of seconds (at 8 192 changed sessions), so 32 rewrote a busy goal's day whole every
 * minute or so; 128 keeps that near the 5 minutes it was at one snapshot per 10 s, and a restore
 * still reads one base and a bounded number of small keys.
 */
export const MAX_DELTAS = 128

/** The delta policy: whether a day whose deltas already hold what `layout` says takes `changed` more entries as a delta (false: written whole). */
export function takesDelta(layout: DayLayout, changed: number): boolean {
  return layout.deltas.length < MAX_DELTAS && layout.deltaEntries + changed <= layout.base
}

export function layoutOf(layouts: GoalLayouts, goal: string, day: number): DayLayout {
  let days = layouts.get(goal)
  if (!days) layouts.set(goal, (days = new Map<number, DayLayout>()))
  let layout = days.get(day)
  if (!layout) days.set(day, (layout = { base: 0, deltas: [], deltaEntries: 0 }))
  return layout
}

/** Notes that the whole set, of `size` entries, was written (its deltas are deleted with it). */
export function wroteWhole(layout: DayLayout, size: number): void {
  layout.base = size
  layout.deltas = []
  layout.deltaEntries = 0
}

/** Notes a delta of `size` entries written under `seq`. */
export function wroteDelta(layout: DayLayout, seq: number, size: number): void {
  layout.deltas.push(seq)
  layout.deltaEntries += size
}
