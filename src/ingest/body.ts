import { LIMITS } from '../schema/event.js'

/** Body size limits of API.md §1 (413 beyond them), enforced by the HTTP layer while reading. */
export const BODY_LIMIT_BYTES = LIMITS.bodyBytes
export const BATCH_LIMIT_BYTES = LIMITS.batchBytes

export type ParsedBody = { ok: true; value: unknown } | { ok: false; error: string }

/**
 * Beacons (navigator.sendBeacon) send text/plain so that no CORS preflight is needed; the body is
 * JSON either way. A request without a Content-Type is read as JSON too.
 */
const JSON_MEDIA_TYPES = new Set(['application/json', 'text/plain', ''])
const BOM = 0xfeff

function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';')
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
}

/**
 * Parses an ingestion body. The charset parameter is ignored: JSON exchanged between systems is
 * UTF-8 (RFC 8259 §8.1), which also lets a leading byte order mark be skipped.
 *
 * @example parseJsonBody(Buffer.from('{"a":1}'), 'text/plain;charset=UTF-8') // { ok: true, value: { a: 1 } }
 */
export function parseJsonBody(body: Buffer, contentType: string | undefined): ParsedBody {
  if (contentType !== undefined && !JSON_MEDIA_TYPES.has(mediaType(contentType))) {
    return { ok: false, error: 'Content-Type must be application/json or text/plain' }
  }
  let text = body.toString('utf8')
  if (text.charCodeAt(0) === BOM) text = text.slice(1)
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, error: 'body is not valid JSON' }
  }
}
