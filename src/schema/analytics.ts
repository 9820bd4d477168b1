import { Type, type Static } from '@sinclair/typebox'
import { Goal } from './api.js'

/*
 * Answers of the goal analytics: one goal's report over time, and two goals' overlap.
 */

export const ReportPoint = Type.Object({
  start: Type.String({ description: 'the local start of the day or hour, with its offset' }),
  sessions: Type.Integer(),
  conversions: Type.Integer(),
  conversion_rate: Type.Number(),
})

export const GoalReport = Type.Object({
  goal: Goal,
  days: Type.Integer(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  timezone: Type.String(),
  total_sessions: Type.Integer(),
  conversions: Type.Integer(),
  conversion_rate: Type.Number(),
  revenue: Type.Null({ description: 'revenue of a goal with a currency; null otherwise' }),
  series: Type.Array(ReportPoint),
})
export type GoalReport = Static<typeof GoalReport>

const OverlapSide = Type.Object({ id: Type.String(), conversions: Type.Integer() })
export const GoalOverlap = Type.Object({
  a: OverlapSide,
  b: OverlapSide,
  both: Type.Integer(),
  a_only: Type.Integer(),
  b_only: Type.Integer(),
  either: Type.Integer(),
})
export type GoalOverlap = Static<typeof GoalOverlap>
