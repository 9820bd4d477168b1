import { fail, type HttpServer, type Request, type Response } from '../http/index.js'
import { cookieValue, hashToken, newId, newToken, SESSION_COOKIE, SESSION_TTL_S, verifyPassword } from '../auth/index.js'
import { AdminLogin, checker, KeyCreate, Login, type ApiKey, type StoredKey, type StoredLogin, type WhoAmI } from '../schema/index.js'
import { authenticate, isResponse, readBody, requiredParam, type ApiContext } from './context.js'
import { publicUser } from './admin-routes.js'

const checkLogin = checker(Login)
const checkAdminLogin = checker(AdminLogin)
const checkKeyCreate = checker(KeyCreate)

/** A scrypt hash of nothing in particular, so an unknown email costs as much as a wrong password. */
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

const publicKey = (k: StoredKey): ApiKey => ({ id: k.id, user_id: k.user_id, created_at: k.created_at })

/** Stores a login session and answers with its cookie (docs/api.md §2: HttpOnly, SameSite=Lax, 30 days). */
async function startLogin(ctx: ApiContext, req: Request, owner: { user_id: string } | { admin_token_hash: string }, body: unknown): Promise<Response> {
  const token = newToken('gps_')
  // the record expires with the cookie and is pruned then (auth/login-pruner.ts)
  const login: StoredLogin = { id: hashToken(token), ...owner, expires_at: Date.now() + SESSION_TTL_S * 1000 }
  await ctx.catalog.put('login', login.id, login)
  // over HTTPS, directly or through a trusted proxy's X-Forwarded-Proto (http/trusted-proxies.ts)
  const secure = req.secure ? '; Secure' : ''
  return {
    status: 200,
    headers: { 'Set-Cookie': `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${SESSION_TTL_S}; HttpOnly; SameSite=Lax${secure}` },
    body,
  }
}

export function authRoutes(server: HttpServer, ctx: ApiContext): void {
  const { catalog, logins } = ctx

  server.route('POST', '/api/login', async (req) => {
    const body = readBody(req, checkLogin)
    if (isResponse(body)) return body
    const { email, password } = body
    const started = Date.now()
    const blocked = logins.begin(email, req.ip, started)
    if (blocked) return fail('TOO_MANY_LOGINS', blocked === 'email' ? 'this email' : 'this client address', { headers: { 'Retry-After': '60' } })
    const user = catalog.userByEmail(email)
    const ok = await verifyPassword(password, user?.password ?? DUMMY_HASH)
    if (!user || !ok) return fail('BAD_LOGIN')
    logins.succeed(email, req.ip, started)
    return startLogin(ctx, req, { user_id: user.id }, publicUser(user))
  })

  // The dashboard's admin sign-in: the token is sent once and traded for the HttpOnly cookie, so
  // it is never kept where page scripts could read it.
  server.route('POST', '/api/session', async (req) => {
    const body = readBody(req, checkAdminLogin)
    if (isResponse(body)) return body
    const started = Date.now()
    if (logins.beginToken(req.ip, started)) return fail('TOO_MANY_TOKENS', { headers: { 'Retry-After': '60' } })
    const binding = ctx.auth.adminLoginBinding(body.admin_token)
    if (binding === null) return fail('BAD_ADMIN_TOKEN')
    logins.tokenAccepted(req.ip, started)
    const who: WhoAmI = { admin: true, user: null }
    return startLogin(ctx, req, { admin_token_hash: binding }, who)
  })

  server.route('GET', '/api/session', (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const who: WhoAmI = p.admin ? { admin: true, user: null } : { admin: false, user: publicUser(p.user) }
    return { status: 200, body: who }
  })

  server.route('POST', '/api/logout', async (req) => {
    const token = cookieValue(req.headers['cookie'], SESSION_COOKIE)
    if (token) {
      const id = hashToken(token)
      if (catalog.login(id)) await catalog.put('login', id, null)
    }
    return { status: 204, headers: { 'Set-Cookie': `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax` } }
  })

  server.route('POST', '/api/keys', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const body = readBody(req, checkKeyCreate, true)
    if (isResponse(body)) return body
    let userId = body.user_id
    if (p.admin) {
      if (!userId) return fail('BAD_REQUEST', 'user_id is required when the admin creates a key')
      if (!catalog.users.has(userId)) return fail('NOT_FOUND', `user ${userId}`)
    } else {
      if (userId !== undefined && userId !== p.user.id) return fail('OWN_KEYS_ONLY')
      userId = p.user.id
    }
    const key = newToken('gpk_')
    const stored: StoredKey = { id: newId(), user_id: userId, created_at: new Date().toISOString(), hash: hashToken(key) }
    await catalog.put('key', stored.id, stored)
    return { status: 201, body: { ...publicKey(stored), key } }
  })

  server.route('GET', '/api/keys', (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const keys = [...catalog.keys.values()].filter((k) => p.admin || k.user_id === p.user.id).map(publicKey)
    return { status: 200, body: { keys } }
  })

  server.route('DELETE', '/api/keys', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    const key = catalog.keys.get(id)
    if (!key || (!p.admin && key.user_id !== p.user.id)) return fail('NOT_FOUND', `key ${id}`)
    await catalog.put('key', id, null)
    return { status: 204 }
  })
}
