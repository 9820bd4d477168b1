import type { Response } from './server.js'

/**
 * Every error answer of the API, by code, with its status: the one place where API.md's statuses
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
  TOO_MANY_LOGINS: { status: 429, message: () => 'too many failed login attempts for this email; try again in a minute' },
  TOO_MANY_TOKENS: { status: 429, message: () => 'too many wrong admin tokens from this address; try again in a minute' },
  RATE_LIMITED: { status: 429, message: (scope: string) => `rate limit exceeded for ${scope}` },
  NO_ROUTE: { status: 404, message: (path: string) => `no route ${path}` },
  WRONG_METHOD: { status: 405, message: (method: string, path: string, allow: string) => `method ${method} not allowed on ${path}; allowed: ${allow}` },
  UPGRADE_REQUIRED: { status: 426, message: (path: string) => `${path} is a WebSocket endpoint; connect with Upgrade: websocket` },
  UNAVAILABLE: { status: 503, message: (why: string) => why },
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
