import { Type, type Static } from '@sinclair/typebox'

const Nullable = <T extends ReturnType<typeof Type.String | typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()])

/**
 * What the processor remembers of one analytics session. Every field is a join of the session's
 * events (min or max by time, first-seen by time), so folding the same event twice, or the events
 * in any order, gives the same summary: replays and backfills can never distort it. Hot sessions
 * are folded in the stream's session table; this is the form they take outside it (the store's
 * records, the changelog, partials between nodes).
 */
export const SessionSummary = Type.Object({
  site_id: Type.String(),
  session_id: Type.String(),
  visitor_id: Nullable(Type.String()),
  user_id: Nullable(Type.String()),
  /** ms of the earliest / latest event */
  first: Type.Number(),
  last: Type.Number(),
  entry_page: Nullable(Type.String()),
  entry_at: Type.Number(),
  exit_page: Nullable(Type.String()),
  exit_at: Type.Number(),
  referrer: Nullable(Type.String()),
  referrer_at: Type.Number(),
  /** the earliest event's client facts win */
  user_agent: Nullable(Type.String()),
  screen_width: Nullable(Type.Number()),
  client_at: Type.Number(),
  /**
   * The session's attributes (docs/api.md §9.4), each the value of its earliest event that carries
   * one (ties: the first to arrive) with that event's time (+Infinity while none). Absent from
   * summaries stored before they were kept.
   */
  ref_host: Type.Optional(Nullable(Type.String())),
  ref_host_at: Type.Optional(Type.Number()),
  utm_source: Type.Optional(Nullable(Type.String())),
  utm_source_at: Type.Optional(Type.Number()),
  utm_medium: Type.Optional(Nullable(Type.String())),
  utm_medium_at: Type.Optional(Type.Number()),
  utm_campaign: Type.Optional(Nullable(Type.String())),
  utm_campaign_at: Type.Optional(Type.Number()),
  country: Type.Optional(Nullable(Type.String())),
  country_at: Type.Optional(Type.Number()),
  /** suggestion values this session already counted (bounded), so a value counts once per session */
  seen: Type.Array(Type.String()),
})
export type SessionSummary = Static<typeof SessionSummary>
