/**
 * What the store reads from and restores into a partition's state: the narrow face it needs,
 * defined here so that the store depends on no processor. The stream's PartitionState has it.
 */
import type { GoalDays, RevenueDays, ValueTallies } from '../goals/index.js'
import { combinationKey, parseCombination, type CombinationCounters, type SessionCounter, type TopK } from '../sketch/index.js'
import type { SessionSummary } from '../schema/index.js'

/** a site's per-day distinct-session counters and suggestion counters */
export interface SiteImage {
  days: Map<number, SessionCounter>
  /** per hour of the recent days (`hourKey`), the distinct sessions active in it */
  hours: Map<number, SessionCounter>
  /** per day, the distinct sessions of each combination of breakdown values, per group of attributes */
  values: Map<number, ValueCounters>
  /** per day, when it last changed; a restored day has not changed since */
  changedAt: Map<number, number>
  paths: TopK
  events: TopK
}

/** the hot session summaries, by slot */
export interface SummarySlots {
  hiAt(slot: number): number
  loAt(slot: number): number
  summaryAt(slot: number): SessionSummary
}

export interface PartitionImage {
  readonly partition: number
  /** the next offset to fold */
  offset: number
  readonly goals: Map<string, GoalDays>
  readonly revenue: Map<string, RevenueDays>
  readonly sites: Map<string, SiteImage>
  readonly summaries: SummarySlots
  /** whether the sessions converting on several days are in every goal's side index they belong to */
  linkedAcross: boolean
  /** the goal's days, created empty when absent */
  goal(goalId: string): GoalDays
  /** the goal's revenue, created empty when absent */
  revenueOf(goalId: string): RevenueDays
  /** per goal, its conversions of each day counted by attribute values */
  readonly tallies: Map<string, ValueTallies>
  /** the goal's counts by value, created when absent (waiting to be counted if the goal holds conversions) */
  talliesOf(goalId: string): ValueTallies
  /**
   * per breakdown value counter, its `changes` when a snapshot last wrote it: a counter of a dirty
   * day is written when they differ (a counter absent here is written)
   */
  readonly valuesWritten: WeakMap<SessionCounter, number>
  /** a site's day's counters of breakdown values, created empty when absent */
  valueCounters(siteId: string, day: number): ValueCounters
  /** the site's state, created empty when absent */
  site(siteId: string): SiteImage
  /** Lets a restored settled day's set go from memory: the store holds it as read (GoalDays.evict). */
  letGo(goalId: string, day: number): void
}

/** Keys of everything but the summaries changed since the last snapshot (the session table tracks those). */
export interface DirtyKeys {
  /** per goal and day, the sessions whose entry changed: [hi, lo, hi, lo, …] */
  goalDays: Map<string, Map<number, number[]>>
  /** per goal, the sessions whose days in the multi-day index changed: [hi, lo, …]; null: write it whole (retention rebuilt it) */
  multiDay: Map<string, number[] | null>
  counters: Map<string, Set<number>>
  /** per site, the hours (`hourKey`) whose session counter changed */
  siteHours: Map<string, Set<number>>
  /** per goal and hour (`hourKey`), the sessions new to the hour: [hi, lo, hi, lo, …] */
  goalHours: Map<string, Map<number, number[]>>
  /** per goal and day, the sessions whose further completion times changed: [hi, lo, …] */
  goalTimes: Map<string, Map<number, number[]>>
  topK: Set<string>
  /** per goal, the days whose revenue changed */
  revenueDays: Map<string, Set<number>>
  /** per site, the days some of whose breakdown values' counters changed (`valuesWritten` tells which) */
  values: Map<string, Set<number>>
}

/** What a snapshot writes: the dirty keys, and the session table's slots that were dirty. */
export interface Dirty extends DirtyKeys {
  summaries: Int32Array
  /** whether the state was linked across goals when these keys were taken (PartitionImage.linkedAcross) */
  linkedAcross?: boolean
  /**
   * per goal and day whose counts by value or set changed, what they were when the keys were taken:
   * the counts are written only if neither changed until the snapshot is written (else deleted)
   */
  tallies?: Map<string, Map<number, TallyCheck>>
}

export interface TallyCheck {
  of: ValueTallies
  /** the day's version, undefined while it is not counted whole */
  version: number | undefined
  /** the goal's day stamp (GoalDays.dayStamp) */
  stamp: number
}

/** What a retention pass removed from one site, for the store to delete: days, and hours as `hourKey`s. */
export interface DroppedKeys {
  counters: number[]
  goalDays: [string, number][]
  siteHours: number[]
  goalHours: [string, number][]
  revenueDays: [string, number][]
  /** days whose breakdown values' counters went */
  valueDays: number[]
}

/** a day's session counters of breakdown values: per group of attributes, by combination of values */
export type ValueCounters = CombinationCounters[]

/** The store's name of a combination's counter among a day's. */
export const valueKey = (group: number, combination: readonly (string | null)[]): string => `${group}:${combinationKey(combination)}`

/** The inverse of valueKey. */
export function parseValueKey(name: string): [number, (string | null)[]] {
  const colon = name.indexOf(':')
  return [Number(name.slice(0, colon)), parseCombination(name.slice(colon + 1))]
}
