/**
 * The durable minimum: bare-uws.mjs plus group commit. Parsed requests wait; the raw bodies of all
 * waiting requests go to a file with one write and one fdatasync, and only then are they answered
 * 202. Requests arriving during a commit wait for the next one. This is the least any endpoint that
 * answers "durable" can do on this disk; the ingest bench reports the service against it.
 *
 * Prints `listening <port>` once bound. Env: BARE_HOST (127.0.0.1), BARE_PORT (0 = any free port),
 * DURABLE_FILE (required: the file appended to; it grows for the life of the process).
 */
import { open } from 'node:fs/promises'
import { OK, answer, serveBaseline } from './lib/uws-baseline.mjs'

const NEWLINE = Buffer.from('\n')
const file = await open(process.env.DURABLE_FILE, 'a')
let waiting = []
let committing = false

async function commit() {
  committing = true
  while (waiting.length > 0) {
    const batch = waiting
    waiting = []
    const buffers = []
    for (const w of batch) buffers.push(w.body, NEWLINE)
    try {
      await file.write(Buffer.concat(buffers))
      await file.datasync()
      for (const w of batch) answer(w.res, '202 Accepted', OK)
    } catch (err) {
      process.stderr.write(`durable-min: ${err.stack ?? err}\n`)
      for (const w of batch) answer(w.res, '503 Service Unavailable', '{"error":"write failed"}')
    }
  }
  committing = false
}

serveBaseline('durable-min', (res, body) => {
  waiting.push({ res, body })
  if (!committing) void commit()
}, () => file.close())
