/**
 * Requests between the nodes of one cluster are signed: an HMAC-SHA256 over the method, the path,
 * the time and the body, under a key derived from the admin token every node shares. A request is
 * taken only within 30 s of its time, so one seen on the wire cannot be replayed later, and a body
 * changed on the way fails the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export const TIME_HEADER = 'x-goalpost-time'
export const SIGNATURE_HEADER = 'x-goalpost-signature'
/** how far a request's time may be from the receiver's clock */
export const MAX_SKEW_MS = 30_000

/** The key requests are signed with, derived so that the admin token itself never travels. */
export function internalKey(adminToken: string): Buffer {
  return createHmac('sha256', adminToken).update('goalpost internal requests v2').digest()
}

export function signature(key: Buffer, method: string, path: string, time: number, body: Buffer | string): string {
  return createHmac('sha256', key).update(`${method.toUpperCase()}\n${path}\n${time}\n`).update(body).digest('base64url')
}

/** The headers that sign a request made now. */
export function signedHeaders(key: Buffer, method: string, path: string, body: string, now = Date.now()): Record<string, string> {
  return { [TIME_HEADER]: String(now), [SIGNATURE_HEADER]: signature(key, method, path, now, body) }
}

/** Why a request's signature is refused, or undefined when it is good. */
export function refusal(
  key: Buffer, method: string, path: string, body: Buffer, headers: Record<string, string | undefined>, now = Date.now(),
): string | undefined {
  const time = Number(headers[TIME_HEADER])
  const shown = headers[SIGNATURE_HEADER]
  if (!Number.isSafeInteger(time) || shown === undefined) return 'the request is not signed'
  if (Math.abs(now - time) > MAX_SKEW_MS) return `the request's time is ${Math.round((now - time) / 1000)} s off this node's clock (at most ${MAX_SKEW_MS / 1000} s)`
  const expected = Buffer.from(signature(key, method, path, time, body))
  const given = Buffer.from(shown)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the signature does not match'
  return undefined
}
