import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp, WebSocket, us_socket_context_t } from 'uWebSockets.js'
import type { Request } from './types.js'
import type { TrustedProxies } from './trusted-proxies.js'
import { fail } from './errors.js'

/** What became of a message: written, queued behind a slow reader, or refused over the limit. */
export type SendResult = 'sent' | 'buffered' | 'dropped'

/** One WebSocket as routes see it; every call is safe after the socket closed (it does nothing). */
export interface Socket {
  send(text: string): SendResult
  /** bytes written but not yet taken by the reader */
  bufferedAmount(): number
  /** closes with a close frame carrying the code and reason */
  end(code: number, reason: string): void
  /** closes at once, without a close frame: for a reader that does not read */
  destroy(): void
  readonly closed: boolean
}

export interface SocketRoute<T> {
  /** what the socket is for, decided from the handshake as a plain request (synchronously) */
  accept(req: Request): T
  open(socket: Socket, data: T): void
  close(socket: Socket, data: T): void
  /** bytes a socket may queue; past it sends are dropped (default 1 MiB) */
  maxBackpressure?: number
}

const DEFAULT_MAX_BACKPRESSURE = 1024 * 1024
/** a close reason must fit a control frame: 125 bytes minus the 2-byte code */
const MAX_REASON_BYTES = 123
const SEND_RESULT: Record<number, SendResult> = { 0: 'buffered', 1: 'sent', 2: 'dropped' }

interface Slot<T> {
  data: T
  socket: UwsSocket | null
}

class UwsSocket implements Socket {
  #ws: WebSocket<unknown>
  #closed = false

  constructor(ws: WebSocket<unknown>) {
    this.#ws = ws
  }

  get closed(): boolean {
    return this.#closed
  }

  markClosed(): void {
    this.#closed = true
  }

  send(text: string): SendResult {
    return this.#closed ? 'dropped' : (SEND_RESULT[this.#ws.send(text, false, false)] ?? 'dropped')
  }

  bufferedAmount(): number {
    return this.#closed ? 0 : this.#ws.getBufferedAmount()
  }

  end(code: number, reason: string): void {
    if (!this.#closed) this.#ws.end(code, cutUtf8(reason, MAX_REASON_BYTES))
  }

  destroy(): void {
    if (!this.#closed) this.#ws.close()
  }
}

/** `s` cut to at most `max` UTF-8 bytes, never inside a character */
export function cutUtf8(s: string, max: number): string {
  const bytes = Buffer.from(s)
  if (bytes.length <= max) return s
  let end = max
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString()
}

/** The handshake as the plain request every HTTP handler sees. */
function handshake(res: UwsResponse, req: UwsRequest, proxies: TrustedProxies): Request {
  const headers: Record<string, string> = {}
  req.forEach((k, v) => {
    headers[k] = v
  })
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString()
  return {
    method: 'GET',
    path: req.getUrl(),
    query: new URLSearchParams(req.getQuery() ?? ''),
    headers,
    body: Buffer.alloc(0),
    ip: proxies.clientAddress(peer, headers['x-forwarded-for']),
    secure: proxies.forwardedHttps(peer, headers['x-forwarded-proto']),
  }
}

/**
 * Registers a WebSocket route on the uWS app. The upgrade is always accepted and the route decides
 * in `open` whether to close: a browser sees a close code and reason, never a refused handshake's
 * status. uWS itself drops sends past `maxBackpressure`, so no socket buffers without bound.
 */
export function registerSocket<T>(app: TemplatedApp, path: string, route: SocketRoute<T>, onError: (err: unknown, req: Request) => void, proxies: TrustedProxies): void {
  app.ws<Slot<T>>(path, {
    maxBackpressure: route.maxBackpressure ?? DEFAULT_MAX_BACKPRESSURE,
    maxPayloadLength: 4 * 1024,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res: UwsResponse, req: UwsRequest, context: us_socket_context_t) => {
      const request = handshake(res, req, proxies)
      let data: T
      try {
        data = route.accept(request)
      } catch (err) {
        onError(err, request)
        res.writeStatus('500 Internal Server Error').writeHeader('Content-Type', 'application/json').end(JSON.stringify(fail('INTERNAL').body))
        return
      }
      const h = request.headers
      res.upgrade<Slot<T>>({ data, socket: null }, h['sec-websocket-key'] ?? '', h['sec-websocket-protocol'] ?? '', h['sec-websocket-extensions'] ?? '', context)
    },
    open: (ws) => {
      const slot = ws.getUserData()
      slot.socket = new UwsSocket(ws)
      route.open(slot.socket, slot.data)
    },
    close: (ws) => {
      const slot = ws.getUserData()
      if (!slot.socket) return
      slot.socket.markClosed()
      route.close(slot.socket, slot.data)
    },
  })
}
