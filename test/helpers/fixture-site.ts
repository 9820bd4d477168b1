import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Teardown } from './server.js'

export interface FixtureSite {
  /** http://127.0.0.1:<port> */
  readonly url: string
  readonly port: number
}

const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'application/javascript; charset=utf-8' }

/**
 * Serves fixed files by path (the query is ignored) from a port of its own, so that its pages have
 * another origin than the service under test, as a customer's site would. POSTs answer 204 (a form
 * that is really sent lands nowhere). The files are made once the port is known, so pages can link
 * to their own site by another host name.
 */
export async function serveFixtureSite(makeFiles: (site: FixtureSite) => Record<string, string>, t: Teardown): Promise<FixtureSite> {
  let files: Record<string, string> = {}
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fixture').pathname
    if (req.method === 'POST') return void res.writeHead(204).end()
    const file = files[path]
    if (file === undefined) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no fixture ${path}`)
    const type = TYPES[path.split('.').pop() ?? ''] ?? 'text/plain'
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(file)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const port = (server.address() as AddressInfo).port
  const site = { url: `http://127.0.0.1:${port}`, port }
  files = makeFiles(site)
  return site
}
