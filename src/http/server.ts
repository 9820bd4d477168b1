import type { HttpResponse as UwsResponse, HttpRequest as UwsRequest, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import { loadUws } from './uws.js'
import { STATUS_TEXT } from './status.js'
import { fail } from './errors.js'

/**
 * A request as handlers see it: plain data, read completely before the handler runs, so a handler
 * is a function of a value and unit tests need no socket.
 */
export interface Request {
  method: string
  path: string
  query: URLSearchParams
  /** lower-case names */
  headers: Record<string, string>
  body: Buffer
  ip: string
}

export interface Response {
  status: number
  headers?: Record<string, string>
  /** an object is sent as JSON; a string or Buffer as is; absent for 204 */
  body?: unknown
}

export type Handler = (req: Request) => Response | Promise<Response>

export interface RouteOptions {
  /** largest accepted body in bytes; larger → 413 (default 64 KiB) */
  bodyLimit?: number
  /** answers carry Access-Control-Allow-Origin: * and OPTIONS is a CORS preflight */
  cors?: boolean
}

interface Route extends RouteOptions {
  handlers: Map<string, Handler>
}

export type Upgrade = (app: TemplatedApp) => void

const DEFAULT_BODY_LIMIT = 64 * 1024
const JSON_TYPE = 'application/json'
const CORS_HEADERS = { 'Access-Control-Allow-Origin': '*' }
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
}

export interface ServerOptions {
  /** called for a handler that threw: the answer is a 500 without details */
  onError(err: unknown, req: Request): void
  /** called after every answer, for metrics */
  onResponse?(req: Request, status: number, ms: number): void
}

/**
 * Exact-path routing over uWS: every route is a fixed path (parameters travel in the query), so a
 * Map lookup routes, and an unknown path (404) is told apart from a wrong method (405).
 */
export class HttpServer {
  readonly #routes = new Map<string, Route>()
  readonly #app: TemplatedApp
  readonly #opts: ServerOptions
  #socket: us_listen_socket | null = null

  constructor(opts: ServerOptions) {
    this.#opts = opts
    this.#app = loadUws().App()
  }

  get app(): TemplatedApp {
    return this.#app
  }

  route(method: string, path: string, handler: Handler, opts: RouteOptions = {}): this {
    let route = this.#routes.get(path)
    if (!route) this.#routes.set(path, (route = { handlers: new Map(), ...opts }))
    Object.assign(route, opts)
    route.handlers.set(method.toUpperCase(), handler)
    return this
  }

  async listen(host: string, port: number): Promise<number> {
    this.#app.any('/*', (res, req) => this.#dispatch(res, req))
    const uws = loadUws()
    return new Promise((resolve, reject) => {
      this.#app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`))
        this.#socket = socket
        resolve(uws.us_socket_local_port(socket))
      })
    })
  }

  close(): void {
    if (this.#socket) loadUws().us_listen_socket_close(this.#socket)
    this.#socket = null
  }

  #dispatch(res: UwsResponse, uReq: UwsRequest): void {
    const started = performance.now()
    const method = uReq.getCaseSensitiveMethod?.() ?? uReq.getMethod().toUpperCase()
    const path = uReq.getUrl()
    const headers: Record<string, string> = {}
    uReq.forEach((k, v) => {
      headers[k] = v
    })
    const rawQuery = uReq.getQuery() ?? ''
    const state = { aborted: false }
    // query and address are read on demand: the ingest hot path needs neither unless rate limits are on
    let query: URLSearchParams | undefined
    let ip: string | undefined
    const req: Request = {
      method: method.toUpperCase(),
      path,
      get query() {
        return (query ??= new URLSearchParams(rawQuery))
      },
      headers,
      body: EMPTY,
      get ip() {
        return (ip ??= headers['x-forwarded-for']?.split(',')[0]?.trim() || (state.aborted ? '' : Buffer.from(res.getRemoteAddressAsText()).toString()))
      },
    }
    res.onAborted(() => {
      state.aborted = true
    })
    const send = (r: Response) => {
      if (state.aborted) return
      state.aborted = true
      res.cork(() => write(res, r))
      this.#opts.onResponse?.(req, r.status, performance.now() - started)
    }

    const route = this.#routes.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path)
    if (!route) return drain(res, req, () => send(fail('NO_ROUTE', path)))
    const extra = route.cors ? CORS_HEADERS : undefined
    if (route.cors && req.method === 'OPTIONS') return drain(res, req, () => send({ status: 204, headers: PREFLIGHT_HEADERS }))
    const handler = route.handlers.get(req.method === 'HEAD' ? 'GET' : req.method)
    if (!handler) {
      const allow = [...route.handlers.keys(), ...(route.cors ? ['OPTIONS'] : [])].join(', ')
      return drain(res, req, () => send(withHeaders(fail('WRONG_METHOD', req.method, path, allow), { Allow: allow, ...extra })))
    }
    const limit = route.bodyLimit ?? DEFAULT_BODY_LIMIT
    const declared = Number(headers['content-length'])
    if (declared > limit) return send(withHeaders(fail('TOO_LARGE', `body is larger than ${limit} bytes`), { Connection: 'close', ...extra }))

    readBody(res, limit, (body) => {
      if (state.aborted) return
      if (body === null) return send(withHeaders(fail('TOO_LARGE', `body is larger than ${limit} bytes`), { Connection: 'close', ...extra }))
      req.body = body
      let out: Response | Promise<Response>
      try {
        out = handler(req)
      } catch (err) {
        this.#opts.onError(err, req)
        return send(withHeaders(fail('INTERNAL'), extra))
      }
      if (out instanceof Promise) {
        out.then(
          (r) => send(extra ? withHeaders(r, extra) : r),
          (err) => {
            this.#opts.onError(err, req)
            send(withHeaders(fail('INTERNAL'), extra))
          },
        )
      } else send(extra ? withHeaders(out, extra) : out)
    })
  }
}

const EMPTY = Buffer.alloc(0)

function withHeaders(r: Response, headers: Record<string, string> | undefined): Response {
  return headers ? { ...r, headers: { ...r.headers, ...headers } } : r
}

/** Reads the whole body; calls back with null as soon as it passes `limit`. */
function readBody(res: UwsResponse, limit: number, done: (body: Buffer | null) => void): void {
  let chunks: Buffer[] | null = []
  let size = 0
  res.onData((ab, isLast) => {
    if (chunks === null) return
    size += ab.byteLength
    if (size > limit) {
      chunks = null
      return done(null)
    }
    // uWS reuses the ArrayBuffer after this callback returns: copy
    if (ab.byteLength > 0) chunks.push(Buffer.from(ab.slice(0)))
    if (isLast) done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
  })
}

/** Answers without the body but only after it arrived, so the client reads the answer cleanly. */
function drain(res: UwsResponse, req: Request, then: () => void): void {
  const length = req.headers['content-length']
  if ((length === undefined || length === '0') && !req.headers['transfer-encoding']) return then()
  res.onData((_ab, isLast) => {
    if (isLast) then()
  })
}

function write(res: UwsResponse, r: Response): void {
  res.writeStatus(`${r.status} ${STATUS_TEXT[r.status] ?? ''}`)
  let body: string | Buffer | undefined
  let type: string | undefined
  if (r.body === undefined || r.status === 204) body = undefined
  else if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) body = r.body
  else {
    body = JSON.stringify(r.body)
    type = JSON_TYPE
  }
  if (type && !r.headers?.['Content-Type']) res.writeHeader('Content-Type', type)
  if (r.headers) for (const k in r.headers) res.writeHeader(k, r.headers[k]!)
  if (body === undefined) res.endWithoutBody?.() ?? res.end()
  else res.end(body)
}
