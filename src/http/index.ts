export { HttpServer, errorResponse, type Request, type Response, type Handler, type RouteOptions } from './server.js'
export { loadUws } from './uws.js'
