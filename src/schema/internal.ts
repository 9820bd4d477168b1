import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { SITE_ID_PATTERN } from './api.js'
import { BREAKDOWN_DIMENSIONS } from './analytics.js'

/*
 * What nodes of one cluster ask each other (POST /internal/partials): a query over some partitions.
 * Validated like every public body: a partial's size follows `limit` and the lists, so each is bounded.
 */
const Day = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })
/** A window as local day numbers, fixed by the node that was asked so every owner uses the same days. */
export const Window = Type.Object({ from: Day, to: Day }, { additionalProperties: false })
export type Window = Static<typeof Window>

const Id = Type.String({ minLength: 1, maxLength: 256 })
const SiteId = Type.String({ pattern: SITE_ID_PATTERN })
const closed = { additionalProperties: false }

const GoalsQuery = Type.Object({
  kind: Type.Literal('goals'),
  site_id: SiteId,
  window: Window,
  goal_ids: Type.Array(Id, { maxItems: 100_000 }),
}, closed)
const SessionsQuery = Type.Object({
  kind: Type.Literal('sessions'),
  goal_id: Id,
  window: Window,
  limit: Type.Integer({ minimum: 1, maximum: 100 }),
  cursor_ts: Type.Union([Type.Number(), Type.Null()]),
}, closed)
const SuggestionsQuery = Type.Object({
  kind: Type.Literal('suggestions'),
  site_id: SiteId,
  of: Type.Union([Type.Literal('path'), Type.Literal('event')]),
  prefix: Type.String({ maxLength: 2048 }),
  min_day: Day,
}, closed)
/** `points`: the series' days, or hours as `hourKey`s, computed once by the node that was asked */
const ReportQuery = Type.Object({
  kind: Type.Literal('report'),
  site_id: SiteId,
  goal_id: Id,
  window: Window,
  interval: Type.Union([Type.Literal('day'), Type.Literal('hour')]),
  points: Type.Array(Type.Integer({ minimum: -32_000_000, maximum: 32_000_000 }), { maxItems: 25 * 7 + 1_000 }),
}, closed)
const OverlapQuery = Type.Object({
  kind: Type.Literal('overlap'),
  site_id: SiteId,
  a: Id,
  b: Id,
  window: Window,
}, closed)
/** `window_ms`: how long after entering a session may reach the last step */
const FunnelQuery = Type.Object({
  kind: Type.Literal('funnel'),
  site_id: SiteId,
  steps: Type.Array(Id, { minItems: 2, maxItems: 8 }),
  window_ms: Type.Integer({ minimum: 60_000, maximum: 10_080 * 60_000 }),
  window: Window,
}, closed)
const BreakdownQuery = Type.Object({
  kind: Type.Literal('breakdown'),
  site_id: SiteId,
  goal_id: Id,
  window: Window,
  by: Type.Union(BREAKDOWN_DIMENSIONS.map((d) => Type.Literal(d))),
}, closed)
const StatusQuery = Type.Object({ kind: Type.Literal('status') }, closed)

export const PartialQuery = Type.Union([GoalsQuery, SessionsQuery, SuggestionsQuery, ReportQuery, OverlapQuery, FunnelQuery, BreakdownQuery])
export type PartialQuery = Static<typeof PartialQuery>

const Partitions = Type.Array(Type.Integer({ minimum: 0, maximum: 1023 }), { maxItems: 1024 })
const requestOf = <Q extends TSchema>(query: Q) => Type.Object({ query, partitions: Partitions }, closed)

/** The request's schema for each kind of query, so that an error names the field, not the union. */
export const PartialsRequests = {
  goals: requestOf(GoalsQuery),
  sessions: requestOf(SessionsQuery),
  suggestions: requestOf(SuggestionsQuery),
  report: requestOf(ReportQuery),
  overlap: requestOf(OverlapQuery),
  funnel: requestOf(FunnelQuery),
  breakdown: requestOf(BreakdownQuery),
  status: requestOf(StatusQuery),
}
export type PartialsRequest = Static<(typeof PartialsRequests)[keyof typeof PartialsRequests]>
