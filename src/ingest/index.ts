export type { SiteInfo } from './context.js'
export { validateEvent } from './validate-event.js'
export { normalizeDomain } from './origin.js'
export { ingestRoutes } from './routes.js'
