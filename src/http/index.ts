export { HttpServer, type Request, type Response, type Handler, type RouteOptions } from './server.js'
export { loadUws } from './uws.js'
export { fail, ERRORS, type ErrorCode } from './errors.js'
export { StaticAsset, acceptsGzip, type StaticAssetOptions } from './static-asset.js'
