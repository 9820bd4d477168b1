/**
 * The routes nodes of one cluster use among themselves, and the operator's view of the cluster.
 * Internal requests carry a secret derived from the admin token every node shares; without it the
 * route does not exist (404), so it is never served to the public.
 */
import { createHmac } from 'node:crypto'
import { fail, type HttpServer } from '../http/index.js'
import { sameSecret } from '../auth/index.js'
import type { StreamProcessor } from '../stream/index.js'
import type { AnyQuery, InteractiveQueries, PartialAnswer, RemotePartials } from '../query/index.js'
import { PartitionsUnavailable } from '../query/index.js'
import { authenticate, isResponse, type ApiContext } from './context.js'

export const INTERNAL_PARTIALS = '/internal/partials'
const INTERNAL_HEADER = 'x-goalpost-internal'
/** an owner that does not answer in this time is asked again after the group is read anew */
const REMOTE_TIMEOUT_MS = 5000

/** The secret nodes show each other: an HMAC of a fixed label under the shared admin token. */
export function internalSecret(adminToken: string): string {
  return createHmac('sha256', adminToken).update('goalpost internal queries v1').digest('base64url')
}

/** Asks another node for partials over HTTP. */
export function remotePartials(secret: string): RemotePartials {
  return async (url, query, partitions) => {
    const res = await fetch(new URL(INTERNAL_PARTIALS, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_HEADER]: secret },
      body: JSON.stringify({ query, partitions }),
      signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
    })
    if (res.status !== 200) throw new Error(`${url} answered ${res.status} for partitions ${partitions.join(',')}`)
    return (await res.json()) as PartialAnswer
  }
}

export interface ClusterContext {
  queries: InteractiveQueries
  stream: StreamProcessor
  secret: string
  /** this node's query address and the log it runs on, for the status view */
  self: string
  log: 'embedded' | 'kafka'
}

export function clusterRoutes(server: HttpServer, api: ApiContext, ctx: ClusterContext): void {
  server.route('POST', INTERNAL_PARTIALS, async (req) => {
    const shown = req.headers[INTERNAL_HEADER]
    if (shown === undefined || !sameSecret(shown, ctx.secret)) return fail('NO_ROUTE', req.path)
    const { query, partitions } = JSON.parse(req.body.toString('utf8')) as { query: AnyQuery; partitions: number[] }
    return { status: 200, body: await ctx.queries.local(query, partitions) }
  }, { bodyLimit: 1024 * 1024, keepAlive: true })

  server.route('GET', '/api/status', async (req) => {
    const p = authenticate(api, req)
    if (isResponse(p)) return p
    if (!p.admin) return fail('ADMIN_ONLY')
    try {
      const [partitions, members] = await Promise.all([ctx.queries.status(), ctx.stream.membership?.members() ?? []])
      return { status: 200, body: { node: ctx.self, log: ctx.log, members, partitions } }
    } catch (err) {
      if (err instanceof PartitionsUnavailable) return fail('UNAVAILABLE', err.message, { headers: { 'Retry-After': '1' } })
      throw err
    }
  })
}
