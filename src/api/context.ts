import type { Catalog } from '../catalog/index.js'
import type { Config } from '../config/index.js'
import { fail, type Request, type Response } from '../http/index.js'
import type { StreamProcessor } from '../stream/index.js'
import type { InteractiveQueries } from '../query/index.js'
import { Authenticator, identifyRequest, type LoginLimiter, type Principal } from '../auth/index.js'
import type { Site } from '../schema/index.js'
import type { Checked } from '../schema/index.js'

export interface ApiContext {
  catalog: Catalog
  auth: Authenticator
  stream: StreamProcessor
  /** answers over every partition, wherever it is owned */
  queries: InteractiveQueries
  config: Config
  logins: LoginLimiter
}

const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE'])

/**
 * Requests a session cookie may make only from this server's own pages: changes, and WebSocket
 * handshakes, which browsers send cross-site with the cookie and no same-origin check of their own.
 */
const ownOriginOnly = (req: Request): boolean => MUTATING.has(req.method) || req.headers['upgrade']?.toLowerCase() === 'websocket'

/**
 * The first check of every authenticated route: 401 without a valid credential, and 403 for a
 * cookie-authenticated change or socket coming from another origin (a cross-site request forgery).
 */
export function authenticate(ctx: ApiContext, req: Request): Principal | Response {
  const p = identifyRequest(ctx.auth, ctx.logins, req.headers, req.ip)
  if (p === 'blocked') return fail('TOO_MANY_BEARERS', { headers: { 'Retry-After': '60' } })
  if (!p) return fail('AUTH_REQUIRED')
  const origin = req.headers['origin']
  if (p.via === 'cookie' && origin !== undefined && ownOriginOnly(req) && !sameOrigin(origin, req.headers['host'])) {
    return fail('FOREIGN_ORIGIN', origin)
  }
  return p
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host
  } catch {
    return false
  }
}

export const isResponse = (x: unknown): x is Response =>
  typeof x === 'object' && x !== null && 'status' in x && typeof (x as Response).status === 'number'

/**
 * The JSON body of a request checked against its schema (unknown fields dropped), or the 400
 * naming what is wrong. An empty body is read as `{}` where `emptyIsObject` says so.
 */
export function readBody<T>(req: Request, check: (value: unknown) => Checked<T>, emptyIsObject = false): T | Response {
  let value: unknown = {}
  if (req.body.length > 0 || !emptyIsObject) {
    try {
      value = JSON.parse(req.body.toString('utf8'))
    } catch {
      return fail('BAD_REQUEST', req.body.length === 0 ? 'body must be a JSON object' : 'body is not valid JSON')
    }
  }
  const checked = check(value)
  return checked.ok ? checked.value : fail('BAD_REQUEST', checked.error)
}

/**
 * An integer query parameter in [min, max]; absent → fallback. Anything else is a 400 naming it:
 * `days=1.5`, `days=abc`, `days=0`.
 */
export function intParam(req: Request, name: string, min: number, max: number, fallback: number): number | Response {
  const raw = req.query.get(name)
  if (raw === null) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    return fail('BAD_REQUEST', `${name} must be an integer from ${min} to ${max}`)
  }
  return Number(raw)
}

export function requiredParam(req: Request, name: string): string | Response {
  const v = req.query.get(name)
  return v === null || v === '' ? fail('BAD_REQUEST', `query parameter ${name} is required`) : v
}

/**
 * The site a request names, after the access rules of docs/api.md §2: a caller without access gets 403
 * whether or not the site exists; the admin gets 404 for an unknown site.
 */
export function accessSite(ctx: ApiContext, p: Principal, siteId: string): Site | Response {
  if (!Authenticator.canAccess(p, siteId)) return fail('NO_SITE_ACCESS', siteId)
  const site = ctx.catalog.sites.get(siteId)
  return site ?? (p.admin ? fail('NOT_FOUND', `site ${siteId}`) : fail('NO_SITE_ACCESS', siteId))
}
