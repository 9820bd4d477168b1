import type { HttpServer } from '../http/index.js'
import type { ApiContext } from './context.js'
import { adminRoutes } from './admin-routes.js'
import { authRoutes } from './auth-routes.js'
import { goalRoutes } from './goal-routes.js'
import { analyticsRoutes } from './analytics-routes.js'
import { funnelRoutes } from './funnel-routes.js'

export function apiRoutes(server: HttpServer, ctx: ApiContext): void {
  adminRoutes(server, ctx)
  authRoutes(server, ctx)
  goalRoutes(server, ctx)
  analyticsRoutes(server, ctx)
  funnelRoutes(server, ctx)
}

export { assetRoutes } from './asset-routes.js'
export { opsRoutes } from './ops-routes.js'
export { liveRoutes } from './live-routes.js'
export { dashboardRoutes } from './dashboard-routes.js'
export { type ApiContext } from './context.js'
export { openApiDocument } from './openapi.js'
export { clusterRoutes, internalRoutes, remotePartials } from './cluster-routes.js'
export { internalKey } from './internal-signature.js'
