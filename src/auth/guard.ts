import type { Authenticator, Principal } from './principal.js'
import type { LoginLimiter } from './login-limiter.js'

/**
 * Who sent a request, with wrong bearer tokens counted per client address: `blocked` when the
 * address is over the limit (its token is not checked), null when it sent no valid credential.
 */
export function identifyRequest(auth: Authenticator, limiter: LoginLimiter, headers: Record<string, string>, ip: string): Principal | null | 'blocked' {
  const bearer = headers['authorization'] !== undefined
  if (bearer && limiter.bearerBlocked(ip)) return 'blocked'
  const p = auth.identify(headers)
  if (p === null && bearer) limiter.bearerFailed(ip)
  return p
}
