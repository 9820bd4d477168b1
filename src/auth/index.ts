export { Authenticator, cookieValue, SESSION_COOKIE, SESSION_TTL_S, type Principal } from './principal.js'
export { hashPassword, verifyPassword, hashToken, newToken, newId, sameSecret } from './secrets.js'
export { resolveAdminToken } from './admin-token.js'
export { LoginLimiter } from './login-limiter.js'
