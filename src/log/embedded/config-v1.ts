/**
 * Config value, version 1 — the LevelDB value under a config key (keys.ts):
 *
 *   version:u8 = 1 | seq:u64 | value:utf8 JSON (to the end)
 *
 * `seq` grows with every put, so `load` can return live records in write order.
 */
import { readU64, writeU64 } from './keys.js'

const VERSION = 1
const HEADER = 1 + 8

export function encodeConfigV1(seq: number, json: string): Buffer {
  const buf = Buffer.allocUnsafe(HEADER + Buffer.byteLength(json))
  buf[0] = VERSION
  writeU64(buf, seq, 1)
  buf.write(json, HEADER, 'utf8')
  return buf
}

export function decodeConfigV1(buf: Buffer): { seq: number; value: unknown } {
  if (buf[0] !== VERSION) throw new Error(`unknown config record version ${buf[0]}`)
  return { seq: readU64(buf, 1), value: JSON.parse(buf.toString('utf8', HEADER)) }
}
