import type { Catalog } from '../catalog/index.js'
import type { StoredUser } from '../schema/index.js'
import { hashToken, sameSecret } from './secrets.js'

export const SESSION_COOKIE = 'goalpost_session'
export const SESSION_TTL_S = 30 * 24 * 60 * 60

/** Who is calling: the admin, or a user through an API key or a login cookie. */
export type Principal = { admin: true; via: 'header' | 'cookie' } | { admin: false; user: StoredUser; via: 'header' | 'cookie' }

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      // a value no browser of ours sent (bad percent-encoding) is no credential: 401, not a crash
      try {
        return decodeURIComponent(part.slice(eq + 1).trim())
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

/**
 * Resolves the credential of a request (docs/api.md §2): a bearer header (admin token or API key) wins
 * over the session cookie; an invalid credential is no credential.
 */
export class Authenticator {
  readonly #catalog: Catalog
  readonly #adminToken: string
  readonly #adminTokenHash: string

  constructor(catalog: Catalog, adminToken: string) {
    this.#catalog = catalog
    this.#adminToken = adminToken
    this.#adminTokenHash = hashToken(adminToken)
  }

  identify(headers: Record<string, string>, now = Date.now()): Principal | null {
    const auth = headers['authorization']
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth)
      return m ? this.identifyToken(m[1]) : null
    }
    const token = cookieValue(headers['cookie'], SESSION_COOKIE)
    if (!token) return null
    const login = this.#catalog.login(hashToken(token))
    if (!login || login.expires_at <= now) return null
    if ('admin_token_hash' in login) return login.admin_token_hash === this.#adminTokenHash ? { admin: true, via: 'cookie' } : null
    const user = this.#catalog.users.get(login.user_id)
    return user ? { admin: false, user, via: 'cookie' } : null
  }

  /** an admin token or API key, as sent in a bearer header or a `key` query parameter */
  identifyToken(token: string): Principal | null {
    if (sameSecret(token, this.#adminToken)) return { admin: true, via: 'header' }
    const key = this.#catalog.keyByHash(hashToken(token))
    const user = key && this.#catalog.users.get(key.user_id)
    return user ? { admin: false, user, via: 'header' } : null
  }

  /** what an admin login made with `token` keeps, or null when `token` is not the admin token */
  adminLoginBinding(token: string): string | null {
    return sameSecret(token, this.#adminToken) ? this.#adminTokenHash : null
  }

  static canAccess(p: Principal, siteId: string): boolean {
    return p.admin || p.user.sites.includes(siteId)
  }
}
