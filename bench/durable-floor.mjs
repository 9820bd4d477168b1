/**
 * The floor of the service as a server: the durable minimum (durable-min.mjs) plus what the API has
 * every accepted event go through, which no build of the service can leave out — the client's
 * address read for the country lookup (an event that names no country is credited to the address it
 * came from), validation, the log record with its session hash (written in place of the raw body),
 * and the fold into a partition's state in memory. Nothing else: no snapshots of that state, no
 * metrics, limits, live updates, or HTTP layer of the service's own. The service does all of this and
 * more, so its rate against the durable minimum cannot be above this server's in the same run.
 *
 * Every site named is taken as a site in UTC with the ingest bench's goals. Prints `listening
 * <port>` once bound. Env: BARE_HOST, BARE_PORT, DURABLE_FILE as durable-min.mjs.
 */
import { open } from 'node:fs/promises'
import { BENCH_GOALS } from '../dist/cli/index.js'
import { openCountryLookup } from '../dist/agent/index.js'
import { validateEvent } from '../dist/ingest/index.js'
import { validateBatch } from '../dist/ingest/validate-batch.js'
import { eventLogRecord } from '../dist/log/index.js'
import { initHash } from '../dist/sketch/index.js'
import { GoalIndex, PartitionState } from '../dist/stream/index.js'
import { answer, groupCommit, serveBaseline } from './lib/uws-baseline.mjs'

await initHash()
const file = await open(process.env.DURABLE_FILE, 'a')
const queue = groupCommit('durable-floor', file)
const countryOf = openCountryLookup()
const RETENTION_MS = 90 * 86_400_000
const CREATED = new Date(Date.now() - 86_400_000).toISOString()
const BAD = (error) => JSON.stringify({ error })
const sites = new Map()
const goals = new GoalIndex()
const state = new PartitionState(0, 1024)

function site(id) {
  let s = sites.get(id)
  if (s === undefined) {
    sites.set(id, (s = { site_id: id, domain: null, timezone: 'UTC', created_at: CREATED }))
    BENCH_GOALS.slice(0, 3).forEach((g, i) => goals.add({ id: `${id}-g${i}`, site_id: id, name: `g${i}`, created_at: CREATED, ...g.body }))
  }
  return s
}

/** folds an accepted event as the service's live fold does, and returns its record */
function fold(event) {
  const r = eventLogRecord(event)
  state.summaries.clock = event.received_at
  state.fold(r.decoded, r.decoded.hashHi, r.decoded.hashLo, site(event.site_id), goals)
  // a slice of the encoder's slab, which no later record writes over: written as it is
  return r.value
}

serveBaseline('durable-floor', (res, body, value) => {
  // read as the service reads it: the text uWS gives, once a request, when an event asks
  let address
  let country
  const ctx = {
    now: Date.now(), retentionMs: RETENTION_MS, site: (id) => (typeof id === 'string' ? site(id) : undefined), botFilter: true,
    clientCountry: () => (country === undefined ? (country = countryOf((address ??= Buffer.from(res.getRemoteAddressAsText()).toString()))) : country),
  }
  const records = []
  if (Array.isArray(value)) {
    const batch = validateBatch(value, ctx)
    if (!batch.ok) return answer(res, '400 Bad Request', BAD(batch.error))
    for (const r of batch.results) if (r.kind === 'accept') records.push(fold(r.event))
  } else {
    const result = validateEvent(value, ctx)
    if (result.kind === 'reject') return answer(res, '400 Bad Request', BAD(result.error))
    if (result.kind === 'accept') records.push(fold(result.event))
  }
  queue(res, records)
}, () => file.close())
