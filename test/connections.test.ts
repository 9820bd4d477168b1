// The server drops a connection idle for 10 s. A client that reuses such a connection later, because
// its event loop was busy (a load generator run synchronously, a long computation), gets no answer
// at all. Query answers therefore close their connection; ingestion keeps its own open.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { createSite, pageview, startServer, uid } from './helpers/index.js'

const server = await startServer({ t })
const site = await createSite(server)

/** One raw HTTP/1.1 connection: sends requests, reads whole answers, tells when the server closed. */
class RawConnection {
  readonly #socket: Socket
  #buffer = ''
  #closed = false
  readonly #waiters: Array<() => void> = []

  private constructor(socket: Socket) {
    this.#socket = socket
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => ((this.#buffer += chunk), this.#wake()))
    socket.on('close', () => ((this.#closed = true), this.#wake()))
    socket.on('error', () => undefined)
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawConnection(socket)))
      socket.once('error', reject)
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w()
  }

  async #until(done: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.#buffer.slice(0, 300))}`)
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }

  /** sends one request and resolves to its status line and headers (lower-case names) */
  async request(method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<{ status: number; headers: Record<string, string> }> {
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${Buffer.byteLength(body)}`]
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`)
    this.#socket.write(lines.join('\r\n') + '\r\n\r\n' + body)
    await this.#until(() => this.#answerEnd() !== -1 || this.#closed, 'an answer')
    const end = this.#answerEnd()
    if (end === -1) throw new Error('the connection closed without an answer')
    const head = this.#buffer.slice(0, this.#buffer.indexOf('\r\n\r\n'))
    this.#buffer = this.#buffer.slice(end)
    const [statusLine, ...fields] = head.split('\r\n')
    const parsed: Record<string, string> = {}
    for (const f of fields) {
      const i = f.indexOf(':')
      parsed[f.slice(0, i).trim().toLowerCase()] = f.slice(i + 1).trim()
    }
    return { status: Number(statusLine.split(' ')[1]), headers: parsed }
  }

  /** where the first complete answer in the buffer ends, or -1 (answers here carry Content-Length) */
  #answerEnd(): number {
    const headEnd = this.#buffer.indexOf('\r\n\r\n')
    if (headEnd === -1) return -1
    const m = /\r\ncontent-length: *(\d+)/i.exec(this.#buffer.slice(0, headEnd))
    const end = headEnd + 4 + (m ? Number(m[1]) : 0)
    return Buffer.byteLength(this.#buffer) >= end ? end : -1
  }

  whenClosed(): Promise<void> {
    return this.#until(() => this.#closed, 'the server to close the connection')
  }

  destroy(): void {
    this.#socket.destroy()
  }
}

t.test('a query answer closes its connection, so no client ever reuses one the server dropped', async (t) => {
  const conn = await RawConnection.open(server.port)
  t.teardown(() => conn.destroy())
  const answer = await conn.request('GET', `/api/goals?site_id=${site.site_id}&days=1`, { Authorization: `Bearer ${server.adminToken}` })
  t.equal(answer.status, 200)
  t.equal(answer.headers['connection'], 'close', 'the answer says so')
  await conn.whenClosed()
  t.ok(conn.closed, 'and the server closes the connection after it')
})

t.test('errors of the query API close the connection too', async (t) => {
  const conn = await RawConnection.open(server.port)
  t.teardown(() => conn.destroy())
  const answer = await conn.request('GET', '/api/goals')
  t.equal(answer.status, 401)
  t.equal(answer.headers['connection'], 'close')
  await conn.whenClosed()
})

t.test('ingestion keeps its connection open for the next request', async (t) => {
  const conn = await RawConnection.open(server.port)
  t.teardown(() => conn.destroy())
  for (let i = 0; i < 3; i++) {
    const event = JSON.stringify(pageview(site.site_id, uid('sess'), '/kept'))
    const answer = await conn.request('POST', '/api/event', { 'Content-Type': 'text/plain' }, event)
    t.equal(answer.status, 202, `request ${i + 1} on the same connection`)
    t.not(answer.headers['connection'], 'close')
  }
  const preflight = await conn.request('OPTIONS', '/api/event', { Origin: 'https://example.com', 'Access-Control-Request-Method': 'POST' })
  t.equal(preflight.status, 204, 'a preflight too')
  t.equal(conn.closed, false)
})

t.test('a client that stalls longer than the idle timeout between two queries gets both answers', async (t) => {
  // the failure this guards against: a keep-alive client blocked for longer than the server's idle
  // timeout writes its next request on the connection the server dropped meanwhile
  const url = `${server.url}/api/goals?site_id=${site.site_id}&days=1`
  const headers = { authorization: `Bearer ${server.adminToken}` }
  const first = await fetch(url, { headers })
  t.equal(first.status, 200)
  await first.text()
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 13_000)
  const second = await fetch(url, { headers })
  t.equal(second.status, 200)
  await second.text()
})
