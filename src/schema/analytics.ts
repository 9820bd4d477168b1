import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Goal, GoalRevenue } from './api.js'

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
  revenue: Type.Union([GoalRevenue, Type.Null()], { description: 'revenue of a goal with a currency; null otherwise' }),
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

export const FUNNEL_MAX_STEPS = 8
export const FUNNEL_MAX_WINDOW_MINUTES = 10_080

export const Funnel = Type.Object({
  id: Type.String(),
  site_id: Type.String(),
  name: Type.String({ maxLength: 256 }),
  steps: Type.Array(Type.String(), { minItems: 2, maxItems: FUNNEL_MAX_STEPS, description: 'goal ids, in order' }),
  window_minutes: Type.Integer({ minimum: 1, maximum: FUNNEL_MAX_WINDOW_MINUTES }),
  created_at: Type.String({ format: 'date-time' }),
}, { $id: 'Funnel' })
export type Funnel = Static<typeof Funnel>

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const FunnelCreate = Type.Object({
  site_id: Type.String(),
  name: Type.Optional(Nullable(Type.String())),
  steps: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 2, maxItems: FUNNEL_MAX_STEPS }),
  window_minutes: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: FUNNEL_MAX_WINDOW_MINUTES }))),
})

export const FunnelList = Type.Object({ funnels: Type.Array(Funnel) })

export const FunnelStep = Type.Object({
  goal_id: Type.String(),
  name: Type.String(),
  sessions: Type.Integer(),
  conversion_rate: Type.Number(),
  from_previous: Type.Number(),
  drop_off: Type.Integer(),
})

export const FunnelReport = Type.Object({
  funnel: Funnel,
  days: Type.Integer(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  total_sessions: Type.Integer(),
  steps: Type.Array(FunnelStep),
})
export type FunnelReport = Static<typeof FunnelReport>

/** The session attributes a goal's conversions break down by (docs/api.md §9.4). */
export const BREAKDOWN_DIMENSIONS = [
  'source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'entry_page', 'device', 'browser', 'os', 'country',
] as const
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number]
export const BREAKDOWN_MAX_LIMIT = 100

export const BreakdownRow = Type.Object({
  value: Nullable(Type.String()),
  sessions: Type.Integer(),
  conversions: Type.Integer(),
  conversion_rate: Type.Number(),
})

export const GoalBreakdown = Type.Object({
  goal_id: Type.String(),
  days: Type.Integer(),
  by: Type.Union(BREAKDOWN_DIMENSIONS.map((d) => Type.Literal(d))),
  total_sessions: Type.Integer(),
  conversions: Type.Integer(),
  rows: Type.Array(BreakdownRow, { description: 'the values with the most conversions, at most `limit`' }),
  other: Nullable(Type.Object({ sessions: Type.Integer(), conversions: Type.Integer() }, { description: 'every other value, summed; null when there is none' })),
})
export type GoalBreakdown = Static<typeof GoalBreakdown>
