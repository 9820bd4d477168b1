import type { Response } from './types.js'

/**
 * Every error answer of the API, by code, with its status: the one place where docs/api.md's statuses
 * are decided. Messages are single sentences naming the field or cause.
 */
export const ERRORS = {
  AUTH_REQUIRED: { status: 401, message: () => 'authentication required' },
  BAD_LOGIN: { status: 401, message: () => 'invalid email or password' },
  BAD_ADMIN_TOKEN: { status: 401, message: () => 'admin_token is not the admin token' },
  OWN_KEYS_ONLY: { status: 403, message: () => 'a user creates API keys only for itself; user_id must be your own id' },
  TOO_LARGE: { status: 413, message: (why: string) => why },
  BAD_REQUEST: { status: 400, message: (why: string) => why },
  NO_SITE_ACCESS: { status: 403, message: (site: string) => `no access to site ${site}` },
  ADMIN_ONLY: { status: 403, message: () => 'only the admin token may do this' },
  FOREIGN_ORIGIN: { status: 403, message: (origin: string) => `Origin ${origin} may not change data or open a socket with a session cookie` },
  NOT_FOUND: { status: 404, message: (what: string) => `${what} not found` },
  CONFLICT: { status: 409, message: (why: string) => why },
  TOO_MANY_LOGINS: { status: 429, message: (scope: string) => `too many failed login attempts for ${scope}; try again in a minute` },
  TOO_MANY_TOKENS: { status: 429, message: () => 'too many wrong admin tokens from this address; try again in a minute' },
  TOO_MANY_BEARERS: { status: 429, message: () => 'too many wrong bearer tokens from this address; try again in a minute' },
  RATE_LIMITED: { status: 429, message: (scope: string) => `rate limit exceeded for ${scope}` },
  NO_ROUTE: { status: 404, message: (path: string) => `no route ${path}` },
  WRONG_METHOD: { status: 405, message: (method: string, path: string, allow: string) => `method ${method} not allowed on ${path}; allowed: ${allow}` },
  UPGRADE_REQUIRED: { status: 426, message: (path: string) => `${path} is a WebSocket endpoint; connect with Upgrade: websocket` },
  UNAVAILABLE: { status: 503, message: (why: string) => why },
  /** the log refused an append for a reason that can pass (disk full, I/O error, broker away): retry */
  LOG_UNAVAILABLE: { status: 503, message: () => 'the event log cannot take events right now; nothing was stored, retry shortly' },
  /** the log refused an append for a reason retrying cannot fix: a fault of the service */
  LOG_FAILED: { status: 500, message: () => 'the event log failed to take the events; nothing was stored' },
  /** the log could not learn in time whether its commit went through: neither "stored" nor "not stored" is known */
  LOG_OUTCOME_UNKNOWN: { status: 500, message: () => 'the event log did not confirm in time whether it took the events; all or none of them may be counted' },
  /** a write of sites, users, keys or goals failed for a reason that can pass: retry */
  STORE_UNAVAILABLE: { status: 503, message: () => 'the change could not be stored right now; nothing was changed, retry shortly' },
  /** a write of sites, users, keys or goals is stored, but this node has not applied it yet (it says why) */
  STORED_NOT_APPLIED: { status: 503, message: (why: string) => why },
  INTERNAL: { status: 500, message: () => 'internal server error' },
} as const

export type ErrorCode = keyof typeof ERRORS

export function fail<C extends ErrorCode>(
  code: C, ...args: [...Parameters<(typeof ERRORS)[C]['message']>, extra?: { body?: Record<string, unknown>; headers?: Record<string, string> }]
): Response {
  const def = ERRORS[code]
  const n = def.message.length
  const extra = args[n] as { body?: Record<string, unknown>; headers?: Record<string, string> } | undefined
  const message = (def.message as (...a: unknown[]) => string)(...args.slice(0, n))
  return { status: def.status, body: { error: message, ...extra?.body }, headers: extra?.headers }
}

/**
 * Whether a failure may pass if the caller sends the same request again. The embedded log says so
 * with `canRetry` (log/embedded/errors.ts), kafkajs with `retriable` on its KafkaJSError; anything
 * else, a plain Error included, is a fault of the service that retrying cannot fix.
 */
/** a write the log stored that this node has not applied yet: the log's LOG_NOT_APPLIED */
export function storedNotApplied(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const { code, message } = err as { code?: unknown; message?: unknown }
  return code === 'LOG_NOT_APPLIED' && typeof message === 'string' ? message : undefined
}

export function isRetryable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { canRetry, retriable } = err as { canRetry?: unknown; retriable?: unknown }
  return canRetry === true || retriable === true
}
