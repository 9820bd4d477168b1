export { HttpServer, type Request, type Response, type Handler, type RouteOptions } from './server.js'
export { loadUws } from './uws.js'
export { fail, isRetryable, ERRORS, type ErrorCode } from './errors.js'
export { TrustedProxies, parseProxyEntry } from './trusted-proxies.js'
