import type { HttpResponse as UwsResponse, HttpRequest as UwsRequest, TemplatedApp, us_listen_socket } from 'uWebSockets.js'
import { loadUws } from './uws.js'
import { STATUS_TEXT } from './status.js'
import { fail, isRetryable, storedNotApplied } from './errors.js'
import { registerSocket, type SocketRoute } from './socket.js'
import { TrustedProxies } from './trusted-proxies.js'
import type { Handler, Request, Response } from './types.js'

export interface RouteOptions {
  /** largest accepted body in bytes; larger → 413 (default 64 KiB) */
  bodyLimit?: number
  /** answers carry Access-Control-Allow-Origin: * and OPTIONS is a CORS preflight */
  cors?: boolean
  /**
   * The connection stays open for the client's next request (default: closed after the answer).
   * The server drops a connection idle for 10 s (uWS's fixed idle timeout). A client whose event
   * loop was busy longer than that, or that keeps connections idle longer, sends its next request
   * on a connection already dropped and gets no answer ("other side closed"), however healthy the
   * server. Queries and admin calls are rare enough to pay a connection each; the hot routes
   * (ingestion, the browser script, node-to-node queries) keep theirs.
   */
  keepAlive?: boolean
}

interface Route extends RouteOptions {
  handlers: Map<string, Handler>
}

const DEFAULT_BODY_LIMIT = 64 * 1024
/** ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT of uWebSockets.js: no SO_REUSEPORT */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1
const JSON_TYPE = 'application/json'
const PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
}

export interface ServerOptions {
  /** called for a handler that threw: the answer is a 500 without details */
  onError(err: unknown, req: Request): void
  /** called after every answer, for metrics */
  onResponse?(req: Request, status: number, ms: number): void
  /** addresses or CIDRs of proxies whose X-Forwarded-* headers count (GOALPOST_TRUST_PROXY); none by default */
  trustProxy?: readonly string[]
}

/**
 * Exact-path routing over uWS: every route is a fixed path (parameters travel in the query), so a
 * Map lookup routes, and an unknown path (404) is told apart from a wrong method (405).
 */
export class HttpServer {
  readonly #routes = new Map<string, Route>()
  readonly #app: TemplatedApp
  readonly #opts: ServerOptions
  readonly #proxies: TrustedProxies
  #socket: us_listen_socket | null = null

  constructor(opts: ServerOptions) {
    this.#opts = opts
    this.#proxies = new TrustedProxies(opts.trustProxy)
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

  /** a WebSocket route; a plain GET of its path answers 426 */
  ws<T>(path: string, route: SocketRoute<T>): this {
    registerSocket(this.#app, path, route, this.#opts.onError, this.#proxies)
    return this.route('GET', path, () => fail('UPGRADE_REQUIRED', path, { headers: { Upgrade: 'websocket' } }))
  }

  /**
   * Listens exclusively: uWS otherwise sets SO_REUSEPORT, and a second process started on the same
   * port would silently share the connections, each with its own data and tokens.
   */
  async listen(host: string, port: number): Promise<number> {
    this.#app.any('/*', (res, req) => this.#dispatch(res, req))
    const uws = loadUws()
    // the (host, port, options, cb) form exists natively but not in the typings
    const listen = this.#app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void
    return new Promise((resolve, reject) => {
      listen.call(this.#app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port}: another process has the port, or ${host} is no address of this machine (GOALPOST_PORT, GOALPOST_HOST)`))
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
    const path = uReq.getUrl()
    const headers: Record<string, string> = {}
    uReq.forEach((k, v) => {
      headers[k] = v
    })
    const method = uReq.getMethod().toUpperCase()
    const route = this.#routes.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path)
    const x = new Exchange(res, method, path, uReq.getQuery() ?? '', headers, route?.cors === true, route?.keepAlive === true, this.#opts, this.#proxies)
    if (!route) return x.drain(fail('NO_ROUTE', path))
    if (route.cors && method === 'OPTIONS') return x.drain(PREFLIGHT)
    const handler = route.handlers.get(method === 'HEAD' ? 'GET' : method)
    if (!handler) {
      const allow = [...route.handlers.keys(), ...(route.cors ? ['OPTIONS'] : [])].join(', ')
      return x.drain(fail('WRONG_METHOD', method, path, allow, { headers: { Allow: allow } }))
    }
    const limit = route.bodyLimit ?? DEFAULT_BODY_LIMIT
    const declared = Number(headers['content-length'])
    // a client still sending its body when the connection closes never reads the answer (its write
    // fails first): a body of a few times the limit is read and dropped before the 413, a larger
    // one is not worth the bandwidth
    if (declared > limit) return declared <= DRAIN_LIMIT ? x.drain(tooLarge(limit)) : x.send(tooLarge(limit))
    x.readBody(limit, handler)
  }
}

/** the client's address: the first X-Forwarded-For hop, else the socket's peer */
const PREFLIGHT: Response = { status: 204, headers: PREFLIGHT_HEADERS }
/** bodies up to this size are read to the end before a 413, so the client sees the answer */
const DRAIN_LIMIT = 8 * 1024 * 1024
const tooLarge = (limit: number): Response => fail('TOO_LARGE', `body is larger than ${limit} bytes`, { headers: { Connection: 'close' } })

/**
 * One request and its answer. A class, not closures: its methods live on the prototype, so a
 * request allocates one object (the ingest path runs this tens of thousands of times a second).
 * It is also the `Request` handlers see: query and client address are read on demand.
 */
class Exchange implements Request {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  body: Buffer = EMPTY
  #res: UwsResponse
  #rawQuery: string
  #query: URLSearchParams | undefined
  #ip: string | undefined
  #peer: string | undefined
  #proxies: TrustedProxies
  #cors: boolean
  #keepAlive: boolean
  #done = false
  #started = performance.now()
  #opts: ServerOptions
  #chunks: Buffer[] | null = null
  #size = 0

  constructor(
    res: UwsResponse, method: string, path: string, rawQuery: string, headers: Record<string, string>, cors: boolean,
    keepAlive: boolean, opts: ServerOptions, proxies: TrustedProxies,
  ) {
    this.#res = res
    this.#proxies = proxies
    this.method = method
    this.path = path
    this.#rawQuery = rawQuery
    this.headers = headers
    this.#cors = cors
    this.#keepAlive = keepAlive
    this.#opts = opts
    res.onAborted(() => {
      this.#done = true
    })
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.#rawQuery))
  }

  get ip(): string {
    return (this.#ip ??= this.#proxies.clientAddress(this.#peerAddress(), this.headers['x-forwarded-for']))
  }

  get secure(): boolean {
    return this.#proxies.forwardedHttps(this.#peerAddress(), this.headers['x-forwarded-proto'])
  }

  /** the address of the other end of the connection: the client, or a proxy */
  #peerAddress(): string {
    // uWS forbids touching a response after it was aborted or answered
    return (this.#peer ??= this.#done ? '' : Buffer.from(this.#res.getRemoteAddressAsText()).toString())
  }

  /** answers without the body, but only after it arrived, so the client reads the answer cleanly */
  drain(r: Response): void {
    const length = this.headers['content-length']
    if ((length === undefined || length === '0') && !this.headers['transfer-encoding']) return this.send(r)
    this.#res.onData((_ab, isLast) => {
      if (isLast) this.send(r)
    })
  }

  /** reads the whole body, then runs the handler; past `limit` bytes answers 413 at once */
  readBody(limit: number, handler: Handler): void {
    this.#chunks = []
    this.#res.onData((ab, isLast) => {
      const chunks = this.#chunks
      if (chunks === null) return
      this.#size += ab.byteLength
      if (this.#size > limit) {
        this.#chunks = null
        return this.send(tooLarge(limit))
      }
      // uWS reuses the ArrayBuffer after this callback returns: copy
      if (ab.byteLength > 0) chunks.push(Buffer.from(ab.slice(0)))
      if (!isLast) return
      this.#chunks = null
      this.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.#size)
      this.#run(handler)
    })
  }

  #run(handler: Handler): void {
    if (this.#done) return
    let out: Response | Promise<Response>
    try {
      out = handler(this)
    } catch (err) {
      return this.#failed(err)
    }
    if (out instanceof Promise) out.then((r) => this.send(r), (err) => this.#failed(err))
    else this.send(out)
  }

  /** A handler threw: a write the storage refused for now is a 503 to retry, anything else a 500. */
  #failed(err: unknown): void {
    this.#opts.onError(err, this)
    const stored = storedNotApplied(err)
    // the answer says what the node did: stored and not applied yet is not "nothing was changed"
    if (stored !== undefined) return this.send(fail('STORED_NOT_APPLIED', stored, { headers: { 'Retry-After': '5' } }))
    this.send(isRetryable(err) ? fail('STORE_UNAVAILABLE', { headers: { 'Retry-After': '1' } }) : fail('INTERNAL'))
  }

  send(r: Response): void {
    if (this.#done) return
    this.#done = true
    this.#res.cork(() => write(this.#res, r, this.#cors, !this.#keepAlive))
    this.#opts.onResponse?.(this, r.status, performance.now() - this.#started)
  }
}

const EMPTY = Buffer.alloc(0)

const STATUS_LINE: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_TEXT).map(([code, text]) => [code, `${code} ${text}`]),
)

/**
 * Writes an answer. An object body is sent as JSON; a string or Buffer as is (with the type its
 * headers give, JSON when they give none), so hot routes can answer with pre-encoded bodies.
 */
function write(res: UwsResponse, r: Response, cors: boolean, close: boolean): void {
  res.writeStatus(STATUS_LINE[r.status] ?? String(r.status))
  if (cors) res.writeHeader('Access-Control-Allow-Origin', '*')
  const headers = r.headers
  if (headers) {
    for (const k in headers) {
      // uWS writes Connection: close itself when asked to close, and must know to close
      if (k === 'Connection') close ||= headers[k] === 'close'
      else res.writeHeader(k, headers[k])
    }
  }
  if (r.body === undefined || r.status === 204) {
    // endWithoutBody's close flag takes a reported length too, which a 204 must not carry: the
    // header alone tells the client to close
    if (close) res.writeHeader('Connection', 'close')
    return void res.endWithoutBody()
  }
  if (!headers?.['Content-Type']) res.writeHeader('Content-Type', JSON_TYPE)
  res.end(typeof r.body === 'string' || Buffer.isBuffer(r.body) ? r.body : JSON.stringify(r.body), close)
}
