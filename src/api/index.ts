import type { HttpServer } from '../http/index.js'
import type { ApiContext } from './context.js'
import { adminRoutes } from './admin-routes.js'
import { authRoutes } from './auth-routes.js'
import { goalRoutes } from './goal-routes.js'

export function apiRoutes(server: HttpServer, ctx: ApiContext): void {
  adminRoutes(server, ctx)
  authRoutes(server, ctx)
  goalRoutes(server, ctx)
}

export { assetRoutes, CLIENT_FILES } from './asset-routes.js'
export { opsRoutes, type OpsContext } from './ops-routes.js'
export { liveRoutes, type LiveOptions } from './live-routes.js'
export { LiveHub, type GoalsOf } from './live-hub.js'
export { dashboardRoutes } from './dashboard-routes.js'
export { authenticate, accessSite, isResponse, type ApiContext } from './context.js'
export { openApiDocument } from './openapi.js'
export { clusterRoutes, internalSecret, remotePartials, type ClusterContext } from './cluster-routes.js'
