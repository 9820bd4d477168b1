import { LIMITS } from '../schema/index.js'

/** Body size limits of docs/api.md §1 (413 beyond them), enforced by the HTTP layer while reading. */
export const BODY_LIMIT_BYTES = LIMITS.bodyBytes
export const BATCH_LIMIT_BYTES = LIMITS.batchBytes

export type ParsedBody = { ok: true; value: unknown } | { ok: false; error: string }

const BOM = 0xfeff

/**
 * Parses an ingestion body. Beacons (navigator.sendBeacon) send text/plain so that no CORS
 * preflight is needed, and docs/api.md §1 reads the body as JSON whatever its type; it names no Content-Type
 * among the causes of a 400, so any type (or none) is read as JSON and only the body decides.
 * The charset parameter is ignored: JSON exchanged between systems is UTF-8 (RFC 8259 §8.1),
 * which also lets a leading byte order mark be skipped.
 *
 * @example parseJsonBody(Buffer.from('{"a":1}')) // { ok: true, value: { a: 1 } }
 */
export function parseJsonBody(body: Buffer): ParsedBody {
  let text = body.toString('utf8')
  if (text.charCodeAt(0) === BOM) text = text.slice(1)
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, error: 'body is not valid JSON' }
  }
}
