/**
 * The routes nodes of one cluster use among themselves, and the operator's view of the cluster.
 * Internal requests are signed (internal-signature.ts); an unsigned one finds no route (404), and
 * they may be served on a port of their own (GOALPOST_INTERNAL_PORT).
 */
import { fail, type HttpServer } from '../http/index.js'
import { checker, PartialsRequests, type PartialsRequest } from '../schema/index.js'
import { refusal, signedHeaders } from './internal-signature.js'
import type { StreamProcessor } from '../stream/index.js'
import type { InteractiveQueries, PartialAnswer, RemotePartials } from '../query/index.js'
import { PartitionsUnavailable } from '../query/index.js'
import { authenticate, isResponse, type ApiContext } from './context.js'

export const INTERNAL_PARTIALS = '/internal/partials'
/** an owner that does not answer in this time is asked again after the group is read anew */
const REMOTE_TIMEOUT_MS = 5000

const checks = {
  goals: checker(PartialsRequests.goals),
  sessions: checker(PartialsRequests.sessions),
  suggestions: checker(PartialsRequests.suggestions),
  report: checker(PartialsRequests.report),
  overlap: checker(PartialsRequests.overlap),
  funnel: checker(PartialsRequests.funnel),
  breakdown: checker(PartialsRequests.breakdown),
  status: checker(PartialsRequests.status),
}

/** The request, or why it is not one: checked against the schema of its kind of query. */
function checkPartials(body: unknown): { ok: true; value: PartialsRequest } | { ok: false; error: string } {
  const kind = (body as { query?: { kind?: unknown } } | null)?.query?.kind
  if (typeof kind !== 'string' || !Object.hasOwn(checks, kind)) return { ok: false, error: `query.kind must be one of ${Object.keys(checks).join(', ')}` }
  return checks[kind as keyof typeof checks](body)
}

/** Asks another node for partials over HTTP, signing each request. */
export function remotePartials(key: Buffer): RemotePartials {
  return async (url, query, partitions) => {
    const body = JSON.stringify({ query, partitions })
    const res = await fetch(new URL(INTERNAL_PARTIALS, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(key, 'POST', INTERNAL_PARTIALS, body) },
      body,
      signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
    })
    if (res.status !== 200) throw new Error(`${url} answered ${res.status} for partitions ${partitions.join(',')}`)
    return (await res.json()) as PartialAnswer
  }
}

export interface ClusterContext {
  queries: InteractiveQueries
  stream: StreamProcessor
  /** the key internal requests are signed with */
  key: Buffer
  /** this node's query address and the log it runs on, for the status view */
  self: string
  log: 'embedded' | 'kafka'
}

/** The route other nodes ask for partials on: on the public server, or on the internal one. */
export function internalRoutes(server: HttpServer, ctx: Pick<ClusterContext, 'queries' | 'key'>): void {
  server.route('POST', INTERNAL_PARTIALS, async (req) => {
    const why = refusal(ctx.key, req.method, req.path, req.body, req.headers)
    if (why === 'the request is not signed') return fail('NO_ROUTE', req.path)
    if (why !== undefined) return { status: 401, body: { error: `internal request refused: ${why}` } }
    let body: unknown
    try {
      body = JSON.parse(req.body.toString('utf8'))
    } catch {
      return fail('BAD_REQUEST', 'body is not valid JSON')
    }
    const checked = checkPartials(body)
    if (!checked.ok) return fail('BAD_REQUEST', checked.error)
    return { status: 200, body: await ctx.queries.local(checked.value.query, checked.value.partitions) }
  }, { bodyLimit: 1024 * 1024, keepAlive: true })
}

/** The operator's view of the cluster. */
export function clusterRoutes(server: HttpServer, api: ApiContext, ctx: ClusterContext): void {
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
