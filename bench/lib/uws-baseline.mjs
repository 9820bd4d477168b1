/**
 * What the uWS baseline servers share: POST /api/event and /api/events read the whole body and
 * JSON.parse it (a 400 when that fails), then hand it on; the durable ones answer after a group
 * commit (`groupCommit`). Prints `listening <port>` once bound. Env: BARE_HOST (127.0.0.1), BARE_PORT
 * (0 = any free port).
 */
import { loadUws } from '../../dist/http/index.js'

const uws = loadUws()
export const OK = '{"status":"ok"}'
const BAD = '{"error":"body is not valid JSON"}'

/** Answers unless the client went away meanwhile (uWS forbids writing to an aborted response). */
export function answer(res, status, body) {
  if (res.aborted) return
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(body)
  })
}

/**
 * Group commit, as the durable minimum does it: each request's buffers wait; the buffers of all
 * waiting requests go to `file` with one write and one fdatasync, and only then are they answered
 * 202 (503 when the write fails). Requests arriving during a commit wait for the next one.
 * Returns what queues a request (`res`, its buffers).
 */
export function groupCommit(name, file) {
  let waiting = []
  let committing = false
  async function commit() {
    committing = true
    while (waiting.length > 0) {
      const batch = waiting
      waiting = []
      try {
        const buffers = []
        for (const w of batch) for (const b of w.buffers) buffers.push(b)
        await file.write(Buffer.concat(buffers))
        await file.datasync()
        for (const w of batch) answer(w.res, '202 Accepted', OK)
      } catch (err) {
        process.stderr.write(`${name}: ${err.stack ?? err}\n`)
        for (const w of batch) answer(w.res, '503 Service Unavailable', '{"error":"write failed"}')
      }
    }
    committing = false
  }
  return (res, buffers) => {
    waiting.push({ res, buffers })
    if (!committing) void commit()
  }
}

/**
 * @param name for messages
 * @param onParsed (res, body: Buffer, value) — called once the body parsed as JSON (`value`); must answer `res`
 * @param onStop optional async clean-up before exit on SIGTERM / SIGINT
 */
export function serveBaseline(name, onParsed, onStop = async () => {}) {
  const ingest = (res) => {
    res.onAborted(() => {
      res.aborted = true
    })
    const chunks = []
    res.onData((ab, isLast) => {
      // uWS reuses the ArrayBuffer once this callback returns, so the service copies it too
      chunks.push(Buffer.from(ab.slice(0)))
      if (!isLast || res.aborted) return
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
      let value
      try {
        value = JSON.parse(body.toString('utf8'))
      } catch {
        answer(res, '400 Bad Request', BAD)
        return
      }
      onParsed(res, body, value)
    })
  }
  const app = uws.App().post('/api/event', ingest).post('/api/events', ingest)
  app.listen(process.env.BARE_HOST ?? '127.0.0.1', Number(process.env.BARE_PORT ?? 0), (socket) => {
    if (!socket) {
      process.stderr.write(`${name}: cannot listen\n`)
      process.exit(1)
    }
    process.stdout.write(`listening ${uws.us_socket_local_port(socket)}\n`)
  })
  const quit = () => onStop().finally(() => process.exit(0))
  process.on('SIGTERM', quit)
  process.on('SIGINT', quit)
}
