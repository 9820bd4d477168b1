import { AMOUNT_PATTERN, CUT_FIELDS, LIMITS, type LoggedEvent } from '../schema/index.js'
import { isBotAgent } from '../agent/index.js'
import { checkShape } from './check-shape.js'
import type { EventResult, IngestContext, Rejected } from './context.js'
import { cutChars, cutUtf8Bytes } from './cut-text.js'
import { pathFromUrl } from './derive-path.js'
import { originAllowed } from './origin.js'
import { parseTimestamp, TIMESTAMP_MESSAGE } from './timestamp.js'

const REQUIRED = ['type', 'site_id', 'session_id'] as const
/** nested objects whose null members count as absent; `properties` is not one: null is a value there */
const NULLABLE_OBJECTS = ['screen', 'utm', 'vitals', 'ad_click_ids'] as const
/** the event types that may carry revenue (docs/api.md §9.2) */
const REVENUE_TYPES = new Set(['custom_event', 'payment'])
const AMOUNT = new RegExp(AMOUNT_PATTERN)
const DAY_MS = 86_400_000
/** an Origin echoed in a message is cut to this, so a hostile header cannot bloat the answer */
const ECHO_LIMIT = 256

type Json = Record<string, unknown>

const reject = (error: string): Rejected => ({ kind: 'reject', error })

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** removes null members */
function dropNulls(o: Json): void {
  for (const key in o) if (o[key] === null) delete o[key]
}

function dropOptionalNulls(e: Json): void {
  dropNulls(e)
  for (const key of NULLABLE_OBJECTS) {
    const nested = e[key]
    if (isObject(nested)) dropNulls(nested)
  }
}

/** docs/api.md §1: the message lists every missing field, in the order type, site_id, session_id */
function missingRequired(e: Json): string | undefined {
  let missing: string[] | undefined
  for (const key of REQUIRED) {
    const value = e[key]
    if (value === undefined || value === '') (missing ??= []).push(key)
  }
  return missing && `missing required fields: ${missing.join(', ')}`
}

/**
 * docs/api.md §1: a request carrying Origin was sent by a browser page, whose User-Agent describes the
 * visitor; a backend caller's agent describes only its HTTP library, so without Origin the body alone
 * speaks. Runs before text is cut and bots are judged, so both apply to the header's value too.
 */
function headerAgent(e: Json, ctx: IngestContext): void {
  if (e.user_agent === undefined && ctx.origin && ctx.userAgent) e.user_agent = ctx.userAgent
}

function cutDescriptiveText(e: Json): void {
  for (const key of CUT_FIELDS) {
    const value = e[key]
    if (typeof value === 'string' && value.length > LIMITS.text) e[key] = cutChars(value, LIMITS.text)
  }
  const stack = e.error_stack
  if (typeof stack === 'string') {
    const kept = cutUtf8Bytes(stack, LIMITS.errorStackBytes)
    if (kept !== stack) e.error_stack = kept
  }
}

function retentionText(ms: number): string {
  if (ms % DAY_MS === 0) return ms === DAY_MS ? '1 day' : `${ms / DAY_MS} days`
  return `${ms / 3_600_000} hours`
}

/** the event time, or the sentence that refuses it */
function eventTime(e: Json, ctx: IngestContext): number | string {
  if (e.timestamp === undefined) return ctx.now
  const ts = parseTimestamp(e.timestamp as string)
  if (ts === undefined) return TIMESTAMP_MESSAGE
  if (ts > ctx.now + LIMITS.futureSkewMs) return 'timestamp is more than 5 minutes in the future'
  if (ts < ctx.now - ctx.retentionMs) return `timestamp is older than the retention of ${retentionText(ctx.retentionMs)}`
  return ts
}

/**
 * What the schema cannot say about revenue: which types may carry it, and a numeric amount's
 * decimal places, judged by the number's shortest spelling (what JSON wrote) as the fold reads it.
 */
function checkRevenue(e: Json): string | undefined {
  if (!REVENUE_TYPES.has(e.type as string)) return 'revenue is only allowed on custom_event and payment events'
  const amount = (e.revenue as { amount: unknown }).amount
  if (typeof amount === 'number' && !AMOUNT.test(String(amount))) return 'revenue.amount must have at most 4 decimal places'
  return undefined
}

function propertiesTooLarge(props: unknown): boolean {
  if (props === undefined) return false
  const text = JSON.stringify(props)
  // a UTF-16 unit takes at most 3 UTF-8 bytes: most payloads need no byte count at all
  return text.length * 3 > LIMITS.propertiesBytes && Buffer.byteLength(text) > LIMITS.propertiesBytes
}

/**
 * Validates one event of POST /api/event and turns it into the record the log stores
 * (docs/api.md §1): nulls and unknown fields removed, descriptive text cut, `path` derived from `url`,
 * `timestamp` replaced by `ts`, the record stamped with `received_at`, and `country` filled in from
 * the client's address when the body names none and the context can tell.
 *
 * Takes ownership of `raw` (the freshly parsed body) and reworks it in place rather than copying:
 * this runs for every event received.
 *
 * @example
 * const r = validateEvent(JSON.parse(body), { now: Date.now(), retentionMs, site, origin, botFilter: true })
 * if (r.kind === 'reject') answer(400, { error: r.error })
 */
export function validateEvent(raw: unknown, ctx: IngestContext): EventResult {
  if (!isObject(raw)) return reject('body must be a JSON object')
  dropOptionalNulls(raw)
  headerAgent(raw, ctx)
  const missing = missingRequired(raw)
  if (missing !== undefined) return reject(missing)
  cutDescriptiveText(raw)
  const shapeError = checkShape(raw)
  if (shapeError !== undefined) return reject(shapeError)

  if (raw.type === 'custom_event' && !raw.event_name) return reject('event_name is required for custom_event')
  if (raw.revenue !== undefined) {
    const revenueError = checkRevenue(raw)
    if (revenueError !== undefined) return reject(revenueError)
  }
  if (propertiesTooLarge(raw.properties)) {
    return reject(`properties must be at most ${LIMITS.propertiesBytes} bytes when serialized`)
  }
  const ts = eventTime(raw, ctx)
  if (typeof ts === 'string') return reject(ts)

  const siteId = raw.site_id as string
  const site = ctx.site(siteId)
  if (site === undefined) return reject(`unknown site_id ${siteId}`)
  if (site.domain && ctx.origin && !originAllowed(ctx.origin, site.domain)) {
    return reject(`Origin ${cutChars(ctx.origin, ECHO_LIMIT)} is not allowed for site ${siteId}`)
  }

  if (raw.path === undefined && typeof raw.url === 'string') {
    const path = pathFromUrl(raw.url)
    if (path !== undefined) raw.path = path
  }
  if (raw.timestamp !== undefined) delete raw.timestamp
  raw.ts = ts
  raw.received_at = ctx.now
  const event = raw as unknown as LoggedEvent

  if (ctx.botFilter && event.user_agent !== undefined && isBotAgent(event.user_agent)) {
    return { kind: 'drop', reason: 'bot', event }
  }
  // docs/api.md §1: the body's country wins; otherwise the client's, never the address itself
  if (event.country === undefined && ctx.clientCountry) {
    const country = ctx.clientCountry()
    if (country !== null) event.country = country
  }
  return { kind: 'accept', event }
}
