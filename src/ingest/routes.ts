import { fail, isRetryable, type HttpServer, type Request, type Response } from '../http/index.js'
import { eventLogRecord, LogError, type EventLog, type ProducerRecord } from '../log/index.js'
import type { Catalog } from '../catalog/index.js'
import type { CountryOf } from '../agent/index.js'
import type { Metrics } from '../metrics/index.js'
import { Authenticator, identifyRequest, type LoginLimiter } from '../auth/index.js'
import { LIMITS } from '../schema/index.js'
import { parseJsonBody } from './body.js'
import { validateEvent } from './validate-event.js'
import { validateBatch } from './validate-batch.js'
import type { Accepted, Dropped, IngestContext } from './context.js'
import { RateLimiter } from './rate-limit.js'

export interface IngestOptions {
  log: EventLog
  topic: string
  catalog: Catalog
  auth: Authenticator
  /** counts wrong bearer tokens per client address */
  logins: LoginLimiter
  metrics: Metrics
  retentionDays: number
  botFilter: boolean
  maxPending: number
  rateLimitSite: number
  rateLimitClient: number
  /** the country of a client address; absent when the lookup is off (GOALPOST_COUNTRY_LOOKUP) */
  countryOf?: CountryOf
  onError(err: unknown): void
}

/** pre-encoded: the answer of nearly every ingest request */
const ACCEPTED: Response = { status: 202, body: '{"status":"ok"}' }
const RETRY = { headers: { 'Retry-After': '1' } }
const unavailable = (why: string) => fail('UNAVAILABLE', why, RETRY)

/**
 * POST /api/event and /api/events: parse, validate, append durably, answer. No state between
 * requests beyond rate-limit buckets; the 202 is sent only after the log has the events.
 */
export function ingestRoutes(server: HttpServer, o: IngestOptions): void {
  const siteLimit = new RateLimiter(o.rateLimitSite)
  const clientLimit = new RateLimiter(o.rateLimitClient)
  const retentionMs = o.retentionDays * 86_400_000
  const site = (id: string) => o.catalog.sites.get(id)
  const context = (req: Request): IngestContext => ({
    now: Date.now(), retentionMs, site, origin: req.headers['origin'], userAgent: req.headers['user-agent'], botFilter: o.botFilter,
    clientCountry: clientCountry(req),
  })
  /**
   * The request's client country, looked up on first demand and then remembered: a batch's events
   * share their request's client, so an uncached lookup (a few µs) runs once a request at most.
   */
  const clientCountry = (req: Request): (() => string | null) | undefined => {
    const countryOf = o.countryOf
    if (countryOf === undefined) return undefined
    let country: string | null | undefined
    return () => (country === undefined ? (country = countryOf(req.ip)) : country)
  }
  const count = (outcome: string, n = 1) => o.metrics.countIngest(outcome, n)
  /** the site id a parsed, not yet validated event names, if it names one */
  const siteIdOf = (e: unknown): string | undefined => {
    const id = (e as { site_id?: unknown } | null)?.site_id
    return typeof id === 'string' ? id : undefined
  }
  /** a site created on another node a moment ago may not be in this node's view yet */
  const unknownSite = (e: unknown): boolean => {
    const id = siteIdOf(e)
    return id !== undefined && !o.catalog.sites.has(id)
  }
  const catchUp = (events: unknown[]): Promise<void> => o.catalog.catchUp(() => !events.some(unknownSite))
  /** the site ids a parsed body names, before it is validated (for the rate limits) */
  const namedSites = (events: unknown[]): string[] => events.map(siteIdOf).filter((id) => id !== undefined)

  /**
   * Rate limits, then backpressure: both answer before the body is validated or an unknown site is
   * looked for, so that a flood of bad or unknown events costs its sender the same as good ones.
   */
  function admit(req: Request, sites: string[], n: number): Response | null {
    if (clientLimit.enabled) {
      const wait = clientLimit.take(req.ip, n)
      if (wait) return fail('RATE_LIMITED', `client ${req.ip}`, { headers: { 'Retry-After': String(wait) } })
    }
    if (siteLimit.enabled) {
      for (const s of new Set(sites)) {
        const wait = siteLimit.take(s, sites.filter((x) => x === s).length)
        if (wait) return fail('RATE_LIMITED', `site ${s}`, { headers: { 'Retry-After': String(wait) } })
      }
    }
    if (o.log.pending() >= o.maxPending) return unavailable('the ingest buffer is full; nothing was stored, retry shortly')
    return null
  }

  /**
   * Every append tries the log, healthy or not: a log that failed heals on its next write, so
   * refusing in advance would keep it failed. docs/api.md §1: 503 when retrying can help, else 500.
   */
  async function append(records: ProducerRecord[], n: number): Promise<Response | null> {
    try {
      if (records.length) await o.log.append(o.topic, records)
      return null
    } catch (err) {
      const retry = isRetryable(err)
      // passing trouble is reported by the log once per failed write, not once per request
      if (!retry) o.onError(err)
      o.metrics.logAppendFailures.inc({ kind: retry ? 'retryable' : 'fatal' })
      count(retry ? 'unavailable' : 'failed', n)
      if (retry) return fail('LOG_UNAVAILABLE', RETRY)
      return err instanceof LogError && err.code === 'LOG_OUTCOME_UNKNOWN' ? fail('LOG_OUTCOME_UNKNOWN') : fail('LOG_FAILED')
    }
  }

  /** the records to log */
  function drops(results: (Accepted | Dropped)[]): ProducerRecord[] {
    const records: ProducerRecord[] = []
    for (let i = 0; i < results.length; i++) {
      const r = results[i]
      if (r.kind === 'accept') records.push(eventLogRecord(r.event))
      else o.metrics.ingestDropped.inc({ reason: r.reason })
    }
    return records
  }

  server.route('POST', '/api/event', async (req) => {
    const started = performance.now()
    const parsed = parseJsonBody(req.body)
    if (!parsed.ok) return count('rejected'), fail('BAD_REQUEST', parsed.error)
    const refused = admit(req, namedSites([parsed.value]), 1)
    if (refused) return count(refused.status === 429 ? 'limited' : 'unavailable'), refused
    if (unknownSite(parsed.value)) await catchUp([parsed.value])
    const result = validateEvent(parsed.value, context(req))
    if (result.kind === 'reject') return count('rejected'), fail('BAD_REQUEST', result.error)
    const failed = await append(drops([result]), 1)
    if (failed) return failed
    count(result.kind === 'accept' ? 'accepted' : 'dropped')
    o.metrics.ingestLatency.observe((performance.now() - started) / 1000)
    return ACCEPTED
  }, { cors: true, bodyLimit: LIMITS.bodyBytes, keepAlive: true })

  server.route('POST', '/api/events', async (req) => {
    const p = identifyRequest(o.auth, o.logins, req.headers, req.ip)
    if (p === 'blocked') return fail('TOO_MANY_BEARERS', { headers: { 'Retry-After': '60' } })
    if (!p) return fail('AUTH_REQUIRED')
    const parsed = parseJsonBody(req.body)
    if (!parsed.ok) return fail('BAD_REQUEST', parsed.error)
    // docs/api.md §1: 1–1000 events; more is too large a request (413), like more than 1 MiB
    if (Array.isArray(parsed.value) && parsed.value.length > LIMITS.batchEvents) {
      return fail('TOO_LARGE', `batch has ${parsed.value.length} events; at most ${LIMITS.batchEvents} are accepted`)
    }
    const raw = Array.isArray(parsed.value) ? parsed.value : [parsed.value]
    const refused = admit(req, namedSites(raw), raw.length)
    if (refused) return count(refused.status === 429 ? 'limited' : 'unavailable', raw.length), refused
    // docs/api.md §2: malformed input is a 400 before access is judged, and a caller without access to a
    // site hears 403 whether or not it exists, so inaccessible sites pass validation as stand-ins
    const denied: string[] = []
    const ctx = context(req)
    ctx.site = (id) => {
      if (Authenticator.canAccess(p, id)) return site(id)
      denied.push(id)
      return { site_id: id, domain: null, timezone: 'UTC' }
    }
    if (Array.isArray(parsed.value) && parsed.value.some(unknownSite)) await catchUp(parsed.value)
    const result = validateBatch(parsed.value, ctx)
    if (!result.ok) return count('rejected', Array.isArray(parsed.value) ? parsed.value.length : 1), fail('BAD_REQUEST', result.error, { body: { errors: result.errors } })
    if (denied.length) return fail('NO_SITE_ACCESS', denied[0])
    const failed = await append(drops(result.results), result.results.length)
    if (failed) return failed
    count('accepted', result.accepted)
    return { status: 202, body: { status: 'ok', accepted: result.accepted } }
  }, { cors: true, bodyLimit: LIMITS.batchBytes, keepAlive: true })
}
