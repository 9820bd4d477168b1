import type { LoggedEvent } from '../schema/index.js'

const BRACE = 0x7d
const BOM = [0xef, 0xbb, 0xbf] as const

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/** where the JSON text starts: after a UTF-8 byte order mark, which JSON.parse would refuse */
function start(body: Buffer): number {
  return body.length >= 3 && body[0] === BOM[0] && body[1] === BOM[1] && body[2] === BOM[2] ? 3 : 0
}

/**
 * The bytes the log stores for a validated event; `body` is the bytes it was sent as, if known.
 *
 * When validation only added members to the body's object (`added`: their names), the body's own
 * bytes are kept and the added members are written before its closing brace: the event is not
 * serialized again, which costs more than the rest of this (a few µs per event). Parsing the
 * result gives the same event as serializing it would (JSON.parse keeps a repeated key's last
 * value, and an added member comes last). Otherwise the event is serialized.
 *
 * @example loggedBytes(Buffer.from('{"type":"pageview",...}'), event, ['ts', 'received_at'])
 */
export function loggedBytes(body: Buffer | null, event: LoggedEvent, added: readonly string[] | null): Buffer {
  if (body === null || added === null) return Buffer.from(JSON.stringify(event))
  let end = body.length - 1
  while (end >= 0 && isSpace(body[end])) end--
  if (end < 0 || body[end] !== BRACE) return Buffer.from(JSON.stringify(event))
  const fields = event as unknown as Record<string, unknown>
  let tail = ''
  for (const key of added) tail += ',"' + key + '":' + JSON.stringify(fields[key])
  tail += '}'
  const from = start(body)
  const out = Buffer.allocUnsafe(end - from + Buffer.byteLength(tail))
  body.copy(out, 0, from, end)
  out.write(tail, end - from)
  return out
}
