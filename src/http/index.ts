export { HttpServer, type Request, type Response, type Handler, type RouteOptions } from './server.js'
export { loadUws } from './uws.js'
export { type Socket, type SocketRoute, type SendResult } from './socket.js'
export { fail, ERRORS, type ErrorCode } from './errors.js'
