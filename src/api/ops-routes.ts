import type { HttpServer } from '../http/index.js'
import type { EventLog } from '../log/index.js'
import type { Metrics } from '../metrics/index.js'
import type { StreamProcessor } from '../stream/index.js'
import { openApiDocument } from './openapi.js'

export interface OpsContext {
  stream: StreamProcessor
  log: EventLog
  metrics: Metrics
}

export function opsRoutes(server: HttpServer, ctx: OpsContext): void {
  // built once: the document is a pure function of the schemas
  const openapi = JSON.stringify(openApiDocument())
  server.route('GET', '/healthz', () => ({ status: 200, body: { status: 'ok' } }))
  server.route('GET', '/readyz', () => {
    const why = ctx.log.healthy() ? ctx.stream.unreadyReason : 'the event log is unreachable'
    return why === undefined
      ? { status: 200, body: { status: 'ready' } }
      : { status: 503, headers: { 'Retry-After': '1' }, body: { error: why } }
  })
  server.route('GET', '/metrics', async () => ({
    status: 200,
    headers: { 'Content-Type': ctx.metrics.registry.contentType },
    body: await ctx.metrics.registry.metrics(),
  }))
  server.route('GET', '/api/openapi.json', () => ({ status: 200, headers: { 'Content-Type': 'application/json' }, body: openapi }))
}
