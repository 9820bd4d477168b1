import { fail, type HttpServer, type Request, type Response } from '../http/index.js'
import { Authenticator, hashPassword, newId } from '../auth/index.js'
import { checker, SiteCreate, SitePatch, UserCreate, UserPatch, type Site, type StoredUser, type User } from '../schema/index.js'
import { isValidTimeZone } from '../goals/index.js'
import { normalizeDomain } from '../ingest/index.js'

/** what normalizeDomain leaves of a usable host name: labels of letters, digits and hyphens */
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
import { authenticate, isResponse, readBody, requiredParam, type ApiContext } from './context.js'

const checkSiteCreate = checker(SiteCreate)
const checkSitePatch = checker(SitePatch)
const checkUserCreate = checker(UserCreate)
const checkUserPatch = checker(UserPatch)

export const publicUser = (u: StoredUser): User => ({ id: u.id, email: u.email, sites: u.sites })

function siteFields(body: { domain?: string | null; timezone?: string }): { domain?: string | null; timezone?: string } | Response {
  const out: { domain?: string | null; timezone?: string } = {}
  if (body.domain !== undefined) {
    if (body.domain === null || body.domain.trim() === '') out.domain = null
    else {
      const host = normalizeDomain(body.domain)
      if (!host || !HOST.test(host)) return fail('BAD_REQUEST', 'domain must be a host name such as example.com')
      out.domain = host
    }
  }
  if (body.timezone !== undefined) {
    if (!isValidTimeZone(body.timezone)) return fail('BAD_REQUEST', `timezone ${JSON.stringify(body.timezone)} is not an IANA time zone`)
    out.timezone = body.timezone
  }
  return out
}

export function adminRoutes(server: HttpServer, ctx: ApiContext): void {
  const { catalog } = ctx

  server.route('POST', '/api/sites', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const body = readBody(req, checkSiteCreate)
    if (isResponse(body)) return body
    const fields = siteFields(body)
    if (isResponse(fields)) return fields
    if (!p.admin) return fail('ADMIN_ONLY')
    const id = body.site_id
    const site: Site = { site_id: id, domain: fields.domain ?? null, timezone: fields.timezone ?? 'UTC', created_at: new Date().toISOString() }
    // one writer per site id, across every node writing the config log
    const taken = await catalog.createUnique('site', id, newId(), () => catalog.put('site', id, site))
    if (taken !== null) return fail('CONFLICT', `site ${id} already exists`, { body: { id } })
    return { status: 201, body: site }
  })

  server.route('GET', '/api/sites', (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const sites = [...catalog.sites.values()].filter((s) => Authenticator.canAccess(p, s.site_id))
    return { status: 200, body: { sites } }
  })

  server.route('PATCH', '/api/sites', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'site_id')
    if (isResponse(id)) return id
    const body = readBody(req, checkSitePatch)
    if (isResponse(body)) return body
    const fields = siteFields(body)
    if (isResponse(fields)) return fields
    if (!p.admin) return fail(Authenticator.canAccess(p, id) ? 'ADMIN_ONLY' : 'NO_SITE_ACCESS', id)
    const site = catalog.sites.get(id)
    if (!site) return fail('NOT_FOUND', `site ${id}`)
    const next: Site = { ...site, ...fields }
    await catalog.put('site', id, next)
    return { status: 200, body: next }
  })

  server.route('POST', '/api/users', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const body = readBody(req, checkUserCreate)
    if (isResponse(body)) return body
    if (!p.admin) return fail('ADMIN_ONLY')
    const sites = [...new Set(body.sites ?? [])]
    const unknown = sites.find((s) => !catalog.sites.has(s))
    if (unknown) return fail('BAD_REQUEST', `sites names unknown site ${unknown}`)
    const email = body.email.trim()
    const identity = email.toLowerCase()
    const exists = (id: string) => fail('CONFLICT', `a user with email ${email} already exists`, { body: { id } })
    const known = catalog.holder('email', identity)
    if (known !== undefined) return exists(known)
    // scrypt first: the claim below is decided by log order, not by who finished hashing first
    const user: StoredUser = { id: newId(), email, sites, password: await hashPassword(body.password), created_at: new Date().toISOString() }
    const holder = await catalog.createUnique('email', identity, user.id, () => catalog.put('user', user.id, user))
    if (holder !== null) return exists(holder)
    return { status: 201, body: publicUser(user) }
  })

  server.route('PATCH', '/api/users', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    const body = readBody(req, checkUserPatch)
    if (isResponse(body)) return body
    if (!p.admin) return fail('ADMIN_ONLY')
    const user = catalog.users.get(id)
    if (!user) return fail('NOT_FOUND', `user ${id}`)
    const sites = [...new Set(body.sites)]
    const unknown = sites.find((s) => !catalog.sites.has(s))
    if (unknown) return fail('BAD_REQUEST', `sites names unknown site ${unknown}`)
    const next = { ...user, sites }
    await catalog.put('user', id, next)
    return { status: 200, body: publicUser(next) }
  })

  server.route('GET', '/api/users', (req: Request) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    if (!p.admin) return { status: 200, body: { users: [publicUser(p.user)] } }
    return { status: 200, body: { users: [...catalog.users.values()].map(publicUser) } }
  })
}
