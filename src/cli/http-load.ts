import http from 'node:http'
import https from 'node:https'
import type { Answer } from './load-loop.js'
import type { SyntheticStream } from './synthetic-stream.js'

export interface HttpTarget {
  /** the service's base URL */
  url: URL
  /** events per request: 1 posts to /api/event, more post a batch to /api/events */
  batch: number
  /** bearer credential for batches */
  key?: string
  connections: number
  timeoutMs: number
}

/** A timeout that names itself, so reports list it as `timeout`. */
class RequestTimeout extends Error {
  override name = 'TimeoutError'
}

/**
 * Sends the stream's events over keep-alive connections, one request at a time on each. Returns
 * the send function for runLoop and a close function for the connections.
 */
export function httpSender(target: HttpTarget, stream: SyntheticStream) {
  const client = target.url.protocol === 'https:' ? https : http
  const agent = new client.Agent({ keepAlive: true, maxSockets: target.connections, noDelay: true })
  const path = target.url.pathname.replace(/\/$/, '') + (target.batch > 1 ? '/api/events' : '/api/event')
  const baseHeaders: Record<string, string> = { 'content-type': 'application/json' }
  if (target.batch > 1 && target.key) baseHeaders.authorization = `Bearer ${target.key}`

  const send = (first: number, n: number) =>
    new Promise<Answer>((resolve, reject) => {
      const body = n > 1 ? stream.batchBody(first, n) : stream.body(first)
      const req = client.request(target.url, {
        agent, method: 'POST', path, timeout: target.timeoutMs,
        headers: { ...baseHeaders, 'content-length': Buffer.byteLength(body) },
      })
      req.once('timeout', () => req.destroy(new RequestTimeout(`no answer within ${target.timeoutMs} ms`)))
      req.once('error', reject)
      req.once('response', (res) => {
        const status = res.statusCode ?? 0
        // the body must be read for the connection to carry the next request
        res.resume()
        res.once('end', () => resolve({ status: String(status), ok: status >= 200 && status < 300 }))
        res.once('error', reject)
      })
      req.end(body)
    })
  return { send, close: () => agent.destroy() }
}
