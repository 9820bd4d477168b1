import type { HttpServer, Request, Response } from '../http/index.js'
import type { Site } from '../schema/index.js'
import { isResponse, type ApiContext } from './context.js'
import { goalsQuery } from './goal-routes.js'
import { LiveHub, type Closing, type GoalsOf } from './live-hub.js'

export interface LiveOptions {
  /** the body of every message; in a group of nodes it gathers the partitions of all of them */
  goals: GoalsOf
  onError(err: unknown): void
}

type Admission = { site: Site; days: number; check: () => Closing | null } | Closing

/**
 * A refusal as a close code: 4000 + the HTTP status `GET /api/goals` would answer (4401, 4400,
 * 4403, 4404), and its error sentence as the reason.
 */
export function closingOf(r: Response): Closing {
  const error = (r.body as { error?: unknown } | undefined)?.error
  return { code: 4000 + r.status, reason: typeof error === 'string' ? error : `HTTP ${r.status}` }
}

/**
 * Browsers cannot set headers on a WebSocket, so other clients send their API key as `?key=`; it
 * counts as the bearer header would (and, like it, wins over a cookie).
 */
function withKey(req: Request): Request {
  const key = req.query.get('key')
  if (key === null || req.headers['authorization'] !== undefined) return req
  return { ...req, headers: { ...req.headers, authorization: `Bearer ${key}` } }
}

function admit(ctx: ApiContext, handshake: Request): Admission {
  const req = withKey(handshake)
  const q = goalsQuery(ctx, req)
  if (isResponse(q)) return closingOf(q)
  // the same questions again on every tick: access can end while the socket is open
  const check = () => {
    const again = goalsQuery(ctx, req)
    return isResponse(again) ? closingOf(again) : null
  }
  return { ...q, check }
}

/**
 * `WS /api/live?site_id=S&days=N` (docs/api.md §8): the `GET /api/goals` body on connect and whenever it
 * changes, at most once a second. Refusals are close frames, checked in the order of §2.
 */
export function liveRoutes(server: HttpServer, ctx: ApiContext, opts: LiveOptions): LiveHub {
  const hub = new LiveHub({ goals: opts.goals, siteOf: (id) => ctx.catalog.sites.get(id), onError: opts.onError })
  server.ws<Admission>('/api/live', {
    accept: (req) => admit(ctx, req),
    open: (socket, a) => {
      if ('code' in a) return socket.end(a.code, a.reason)
      hub.join(socket, a.site.site_id, a.days, a.check).catch((err) => {
        opts.onError(err)
        socket.end(1011, 'internal server error')
      })
    },
    close: (socket) => hub.leave(socket),
  })
  hub.start()
  return hub
}
