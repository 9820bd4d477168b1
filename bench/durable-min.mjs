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
import { groupCommit, serveBaseline } from './lib/uws-baseline.mjs'

const NEWLINE = Buffer.from('\n')
const file = await open(process.env.DURABLE_FILE, 'a')
const queue = groupCommit('durable-min', file)

serveBaseline('durable-min', (res, body) => queue(res, [body, NEWLINE]), () => file.close())
