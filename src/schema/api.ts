import { Type, type Static, type TSchema } from '@sinclair/typebox'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const Instant = Type.String({ format: 'date-time' })

export const ErrorBody = Type.Object({ error: Type.String() }, { $id: 'Error' })

export const SITE_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$'

export const Site = Type.Object({
  site_id: Type.String({ pattern: SITE_ID_PATTERN }),
  domain: Nullable(Type.String()),
  timezone: Type.String(),
  created_at: Instant,
}, { $id: 'Site' })
export type Site = Static<typeof Site>

export const SiteCreate = Type.Object({
  site_id: Type.String({ pattern: SITE_ID_PATTERN }),
  domain: Type.Optional(Nullable(Type.String({ maxLength: 253 }))),
  timezone: Type.Optional(Type.String({ description: 'IANA time zone, default UTC' })),
})
export const SitePatch = Type.Object({
  domain: Type.Optional(Nullable(Type.String({ maxLength: 253 }))),
  timezone: Type.Optional(Type.String()),
})
export const SiteList = Type.Object({ sites: Type.Array(Site) })

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  sites: Type.Array(Type.String()),
}, { $id: 'User' })
export type User = Static<typeof User>

/** A user as the catalog holds it: the public record plus the password hash. */
export type StoredUser = User & { password: string; created_at: string }

export const UserCreate = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }),
  password: Type.String({ minLength: 8, maxLength: 1024 }),
  sites: Type.Optional(Type.Array(Type.String({ pattern: SITE_ID_PATTERN }), { maxItems: 10000 })),
})
export const UserPatch = Type.Object({
  sites: Type.Array(Type.String({ pattern: SITE_ID_PATTERN }), { maxItems: 10000 }),
})
export const Login = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 1024 }),
})

export const ApiKey = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  created_at: Instant,
}, { $id: 'ApiKey' })
export type ApiKey = Static<typeof ApiKey>
export type StoredKey = ApiKey & { hash: string }
export const ApiKeyCreated = Type.Composite([ApiKey, Type.Object({ key: Type.String() })])
export const KeyCreate = Type.Object({ user_id: Type.Optional(Type.String()) })
export const KeyList = Type.Object({ keys: Type.Array(ApiKey) })

/**
 * A login session behind the goalpost_session cookie (kept hashed, like keys): a user's, or the
 * admin's. An admin login keeps the hash of the admin token it was exchanged for, so that setting a
 * new token ends every admin login made with the old one.
 */
export type StoredLogin =
  | { id: string; user_id: string; expires_at: number }
  | { id: string; admin_token_hash: string; expires_at: number }

export const AdminLogin = Type.Object({
  admin_token: Type.String({ minLength: 1, maxLength: 1024, description: 'the admin token, exchanged once for the session cookie' }),
})
export const WhoAmI = Type.Object({
  admin: Type.Boolean(),
  user: Nullable(User),
}, { $id: 'WhoAmI' })
export type WhoAmI = Static<typeof WhoAmI>

export const GOAL_TYPES = ['pageview', 'custom_event'] as const
export const GOAL_TYPE_ALIASES: Record<string, (typeof GOAL_TYPES)[number]> = {
  pageview: 'pageview', page: 'pageview', path: 'pageview', custom_event: 'custom_event',
}

export const CONDITION_OPS = ['is', 'is_not', 'contains', 'exists'] as const
/** Limits of a goal's property conditions. */
export const CONDITION_LIMITS = { conditions: 8, values: 20, key: 64, value: 256 } as const
export const CURRENCY_PATTERN = '^[A-Z]{3}$'

/**
 * One condition on an event's properties. `values` is absent for `exists` and required for the
 * other operators (checked beside the schema, where the 400 can say which operator wants it).
 */
export const PropertyCondition = Type.Object({
  key: Type.String({ minLength: 1, maxLength: CONDITION_LIMITS.key }),
  op: Type.Union(CONDITION_OPS.map((o) => Type.Literal(o)), { description: 'is, is_not, contains or exists' }),
  values: Type.Optional(Type.Array(Type.String({ maxLength: CONDITION_LIMITS.value }), { minItems: 1, maxItems: CONDITION_LIMITS.values })),
})
export type PropertyCondition = Static<typeof PropertyCondition>

export const Goal = Type.Object({
  id: Type.String(),
  site_id: Type.String(),
  name: Type.String({ maxLength: 256 }),
  goal_type: Type.Union(GOAL_TYPES.map((g) => Type.Literal(g))),
  match_event: Type.Optional(Type.String()),
  match_path: Type.Optional(Type.String()),
  /** event goals only: every condition must hold (records written before conditions existed have none) */
  match_properties: Type.Optional(Type.Array(PropertyCondition)),
  /** event goals only: the currency whose revenue the goal sums */
  currency: Type.Optional(Type.String({ pattern: CURRENCY_PATTERN })),
  created_at: Instant,
}, { $id: 'Goal' })
export type Goal = Static<typeof Goal>

export const GoalCreate = Type.Object({
  site_id: Type.String(),
  name: Type.Optional(Nullable(Type.String())),
  goal_type: Type.String({ description: 'pageview (aliases page, path) or custom_event' }),
  match_event: Type.Optional(Nullable(Type.String())),
  match_path: Type.Optional(Nullable(Type.String())),
  // null counts as absent (removed before validation, so that errors name the member at fault)
  match_properties: Type.Optional(Type.Array(PropertyCondition, { minItems: 1, maxItems: CONDITION_LIMITS.conditions, description: 'event goals only; null counts as absent' })),
  currency: Type.Optional(Type.String({ pattern: CURRENCY_PATTERN, description: 'ISO 4217 code; event goals only; null counts as absent' })),
})
export const GoalPatch = Type.Object({ name: Nullable(Type.String()) })

/** A goal's revenue over a window: exact decimals with four places, as strings. */
export const GoalRevenue = Type.Object({
  currency: Type.String(),
  total: Type.String({ pattern: '^\\d+\\.\\d{4}$' }),
  average: Type.String({ pattern: '^\\d+\\.\\d{4}$' }),
  events: Type.Integer(),
  other_currency_events: Type.Integer(),
})
export type GoalRevenue = Static<typeof GoalRevenue>

export const GoalStats = Type.Composite([Goal, Type.Object({
  conversions: Type.Integer(),
  conversion_rate: Type.Number(),
  revenue: Nullable(GoalRevenue),
})])
export const GoalList = Type.Object({
  site_id: Type.String(),
  days: Type.Integer(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  timezone: Type.String(),
  total_sessions: Type.Integer(),
  goals: Type.Array(GoalStats),
})
export type GoalList = Static<typeof GoalList>

export const ConvertedSession = Type.Object({
  session_id: Type.String(),
  visitor_id: Nullable(Type.String()),
  user_id: Nullable(Type.String()),
  entry_page: Nullable(Type.String()),
  exit_page: Nullable(Type.String()),
  referrer: Nullable(Type.String()),
  device: Nullable(Type.Union([Type.Literal('desktop'), Type.Literal('mobile'), Type.Literal('tablet')])),
  browser: Nullable(Type.String()),
  os: Nullable(Type.String()),
  duration: Type.Number(),
  started_at: Instant,
  timestamp: Instant,
})
export type ConvertedSession = Static<typeof ConvertedSession>
export const SessionList = Type.Object({
  goal_id: Type.String(),
  days: Type.Integer(),
  conversions: Type.Integer(),
  sessions: Type.Array(ConvertedSession),
  next_cursor: Nullable(Type.String()),
})
export type SessionList = Static<typeof SessionList>

export const Suggestions = Type.Object({
  suggestions: Type.Array(Type.Object({ value: Type.String(), sessions: Type.Integer() })),
})
export type Suggestions = Static<typeof Suggestions>

export const IngestOk = Type.Object({ status: Type.Literal('ok') })
export const BatchOk = Type.Object({ status: Type.Literal('ok'), accepted: Type.Integer() })
export const BatchError = Type.Object({
  error: Type.String(),
  errors: Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() })),
})
