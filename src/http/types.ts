/** The shapes handlers deal in, below the server, its sockets and its errors. */

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
  /** the client's address: the peer, or what a trusted proxy says in X-Forwarded-For */
  ip: string
  /** the client reached us over HTTPS: X-Forwarded-Proto: https from a trusted proxy */
  secure: boolean
}

export interface Response {
  status: number
  headers?: Record<string, string>
  /** an object is sent as JSON; a string or Buffer as is; absent for 204 */
  body?: unknown
}

export type Handler = (req: Request) => Response | Promise<Response>
