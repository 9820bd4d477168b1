import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sleep, type Teardown } from './server.js'

/** One POST the recorder passed on, with the upstream's answer. */
export interface Recorded {
  /** the first path segment the client used: `/<prefix>/api/event` */
  prefix: string
  path: string
  /** when the request reached the recorder, epoch ms */
  at: number
  status: number
  origin: string | undefined
  userAgent: string | undefined
  contentType: string | undefined
  /** the request body as text, and parsed when it was JSON */
  text: string
  body: any
}

export interface Recorder {
  readonly url: string
  readonly posts: Recorded[]
  /** resolves with the posts once `until(posts)` holds; rejects naming `what` after the deadline */
  waitFor(until: (posts: Recorded[]) => boolean, what: string, timeoutMs?: number): Promise<Recorded[]>
}

const HEADERS_PASSED = ['content-type', 'origin', 'user-agent', 'if-none-match', 'accept-encoding']
const HEADERS_RETURNED = ['content-type', 'etag', 'cache-control', 'access-control-allow-origin', 'content-encoding', 'vary', 'retry-after']

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/**
 * A reverse proxy standing for a service behind a path prefix: `/<prefix>/<rest>` is forwarded to
 * `<upstream>/<rest>` with the headers a browser sends, and every POST is recorded with the answer
 * the upstream gave. Tests see exactly what a page sent and what the real server said to it.
 */
export async function startRecorder(upstream: string, t: Teardown): Promise<Recorder> {
  const posts: Recorded[] = []
  const server = createServer((req, res) => void forward(req, res))

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now()
    const url = new URL(req.url ?? '/', 'http://recorder')
    const [, prefix = '', ...rest] = url.pathname.split('/')
    const path = '/' + rest.join('/')
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await readBody(req)
    const headers: Record<string, string> = {}
    for (const name of HEADERS_PASSED) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
    try {
      const answer = await fetch(upstream + path + url.search, { method: req.method, headers, body: body as BodyInit | undefined, redirect: 'manual' })
      const bytes = Buffer.from(await answer.arrayBuffer())
      if (req.method === 'POST') {
        const text = body?.toString() ?? ''
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          // a request that is not JSON is recorded without a body
        }
        posts.push({
          prefix, path, at, status: answer.status, origin: headers.origin, userAgent: headers['user-agent'],
          contentType: headers['content-type'], text, body: parsed,
        })
      }
      // fetch has already decoded a gzip body: pass the bytes on as plain
      for (const name of HEADERS_RETURNED) {
        const value = answer.headers.get(name)
        if (value !== null && name !== 'content-encoding') res.setHeader(name, value)
      }
      res.writeHead(answer.status).end(bytes)
    } catch (err) {
      res.writeHead(502).end(String(err))
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const port = (server.address() as AddressInfo).port

  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    async waitFor(until, what, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (!until(posts)) {
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for ${what}; received:\n${posts.map((p) => p.text).join('\n')}`)
        }
        await sleep(25)
      }
      return posts
    },
  }
}
