/**
 * Snapshot encoding, version 1, of one session summary (stream/session-summary.ts), stored under
 * s!<p>!<hash16>:
 *
 *   record      = version:u8 (=1) kind:u8 (=5) body                  (record-v1.ts)
 *   body        = first:f64 last:f64 entry_at:f64 exit_at:f64 referrer_at:f64 client_at:f64
 *                 present:u8 [screen_width:f64]
 *                 site_id:str session_id:str [visitor_id:str] [user_id:str]
 *                 [entry_page:str] [exit_page:str] [referrer:str] [user_agent:str]
 *                 n:varint n × seen:str
 *                 [attributes]
 *   attributes  = has:u8 then, for each bit set, at:f64 value:str — bit 0 ref_host, 1 utm_source,
 *                 2 utm_medium, 3 utm_campaign, 4 country (an unset one is null with at +Infinity).
 *                 Summaries written before attributes were kept end after `seen`.
 *   present     = bit 0 visitor_id, 1 user_id, 2 entry_page, 3 exit_page, 4 referrer,
 *                 5 user_agent, 6 screen_width: the field follows (else it is null)
 *   str         = tag:varint (tag even: tag/2 bytes of UTF-8 | tag odd: (tag−1)/2 × utf16:u16)
 *   varint      = LEB128, 7 bits a byte, low bits first
 *
 * Numbers are little-endian float64, so the "unset" sentinels stay what they are: entry_at,
 * referrer_at and client_at are +Infinity and exit_at −Infinity until an event sets them. A string
 * holding a lone surrogate (JSON lets a client send one) cannot be UTF-8, and travels as UTF-16 so
 * that it comes back unchanged.
 *
 * Summaries written before this encoding are JSON text (first byte `{`, never a version byte),
 * with null for the unset sentinels; they still decode.
 *
 * Why not JSON: JSON.stringify with a replacer took 5.4 µs of CPU for a typical summary and was
 * most of a snapshot; this takes 1.6–1.9 µs and 40 % fewer bytes (measured, Node 20).
 */
import type { SessionSummary } from '../schema/index.js'
import { HEADER, KIND_SUMMARY, Reader, SNAPSHOT_VERSION } from './record-v1.js'

const TIMES = 6
const PRESENT_AT = HEADER + 8 * TIMES
const VISITOR = 1
const USER = 2
const ENTRY = 4
const EXIT = 8
const REFERRER = 16
const USER_AGENT = 32
const SCREEN = 64
const JSON_START = 0x7b // '{'
const ATTRIBUTES = ['ref_host', 'utm_source', 'utm_medium', 'utm_campaign', 'country'] as const
const ATTRIBUTE_AT = ['ref_host_at', 'utm_source_at', 'utm_medium_at', 'utm_campaign_at', 'country_at'] as const
/** bytes a string of n UTF-16 units may take at most: its tag, and 3 bytes of UTF-8 per unit */
const strBound = (s: string | null) => (s === null ? 0 : 5 + 3 * s.length)
/** unpaired surrogates only: in a /u pattern a pair is one code point, outside this range */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** one scratch buffer for every encoding, grown for a summary larger than it */
let scratch = Buffer.allocUnsafeSlow(16 * 1024)
let view = new DataView(scratch.buffer, scratch.byteOffset, scratch.byteLength)

/** The encoding of a summary, in a Buffer of its own. */
export function encodeSummary(s: SessionSummary): Buffer {
  // (a small Buffer comes from Node's shared pool: cheaper than a fresh allocation)
  const view = encodeSummaryView(s)
  const out = Buffer.allocUnsafe(view.length)
  view.copy(out)
  return out
}

/**
 * The encoding of a summary as a view of a buffer that the next encoding overwrites: for a
 * consumer that copies it at once. A snapshot of 500k summaries allocated 150 MB of Buffers
 * otherwise, and the GC pauses they caused stalled the event loop (bench/hot-sessions.mjs).
 */
export function encodeSummaryView(s: SessionSummary): Buffer {
  let bound = PRESENT_AT + 1 + 8 + 5 + strBound(s.site_id) + strBound(s.session_id) + strBound(s.visitor_id) + strBound(s.user_id)
    + strBound(s.entry_page) + strBound(s.exit_page) + strBound(s.referrer) + strBound(s.user_agent)
  for (const v of s.seen) bound += strBound(v)
  bound += 1
  for (const a of ATTRIBUTES) bound += 8 + strBound(s[a] ?? null)
  if (bound > scratch.length) {
    scratch = Buffer.allocUnsafeSlow(2 * bound)
    view = new DataView(scratch.buffer, scratch.byteOffset, scratch.byteLength)
  }
  const b = scratch
  b[0] = SNAPSHOT_VERSION
  b[1] = KIND_SUMMARY
  view.setFloat64(2, s.first, true)
  view.setFloat64(10, s.last, true)
  view.setFloat64(18, s.entry_at, true)
  view.setFloat64(26, s.exit_at, true)
  view.setFloat64(34, s.referrer_at, true)
  view.setFloat64(42, s.client_at, true)
  let present = 0
  if (s.visitor_id != null) present |= VISITOR
  if (s.user_id != null) present |= USER
  if (s.entry_page != null) present |= ENTRY
  if (s.exit_page != null) present |= EXIT
  if (s.referrer != null) present |= REFERRER
  if (s.user_agent != null) present |= USER_AGENT
  if (s.screen_width != null) present |= SCREEN
  b[PRESENT_AT] = present
  let at = PRESENT_AT + 1
  if (present & SCREEN) {
    view.setFloat64(at, s.screen_width!, true)
    at += 8
  }
  at = writeStr(b, at, s.site_id)
  at = writeStr(b, at, s.session_id)
  if (present & VISITOR) at = writeStr(b, at, s.visitor_id!)
  if (present & USER) at = writeStr(b, at, s.user_id!)
  if (present & ENTRY) at = writeStr(b, at, s.entry_page!)
  if (present & EXIT) at = writeStr(b, at, s.exit_page!)
  if (present & REFERRER) at = writeStr(b, at, s.referrer!)
  if (present & USER_AGENT) at = writeStr(b, at, s.user_agent!)
  at = writeVarint(b, at, s.seen.length)
  for (const v of s.seen) at = writeStr(b, at, v)
  const hasAt = at++
  let has = 0
  for (let i = 0; i < ATTRIBUTES.length; i++) {
    const value = s[ATTRIBUTES[i]]
    if (value == null) continue
    has |= 1 << i
    view.setFloat64(at, s[ATTRIBUTE_AT[i]] ?? Infinity, true)
    at = writeStr(b, at + 8, value)
  }
  b[hasAt] = has
  return b.subarray(0, at)
}

export function decodeSummary(buf: Uint8Array): SessionSummary {
  if (buf[0] === JSON_START) return decodeJson(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString())
  const r = new Reader(buf, KIND_SUMMARY)
  const first = r.f64()
  const last = r.f64()
  const entryAt = r.f64()
  const exitAt = r.f64()
  const referrerAt = r.f64()
  const clientAt = r.f64()
  const present = r.u8()
  const screen = present & SCREEN ? r.f64() : null
  const site = readStr(r)
  const session = readStr(r)
  const s: SessionSummary = {
    site_id: site,
    session_id: session,
    visitor_id: present & VISITOR ? readStr(r) : null,
    user_id: present & USER ? readStr(r) : null,
    first,
    last,
    entry_page: present & ENTRY ? readStr(r) : null,
    entry_at: entryAt,
    exit_page: present & EXIT ? readStr(r) : null,
    exit_at: exitAt,
    referrer: present & REFERRER ? readStr(r) : null,
    referrer_at: referrerAt,
    user_agent: present & USER_AGENT ? readStr(r) : null,
    screen_width: screen,
    client_at: clientAt,
    seen: [],
  }
  const n = r.varint()
  for (let i = 0; i < n; i++) s.seen.push(readStr(r))
  const has = r.atEnd() ? 0 : r.u8()
  for (let i = 0; i < ATTRIBUTES.length; i++) {
    if (has & (1 << i)) {
      s[ATTRIBUTE_AT[i]] = r.f64()
      s[ATTRIBUTES[i]] = readStr(r)
    } else {
      s[ATTRIBUTES[i]] = null
      s[ATTRIBUTE_AT[i]] = Infinity
    }
  }
  r.end()
  return s
}

/** The `last` time alone, without decoding the rest (the retention pass reads every stored summary). */
export function lastOfSummary(buf: Uint8Array): number {
  if (buf[0] === JSON_START) return decodeSummary(buf).last
  const r = new Reader(buf, KIND_SUMMARY)
  r.f64()
  return r.f64()
}

/** the encoding before this one: JSON, the unset sentinels as null */
function decodeJson(text: string): SessionSummary {
  const s = JSON.parse(text) as SessionSummary
  s.entry_at ??= Infinity
  s.exit_at ??= -Infinity
  s.referrer_at ??= Infinity
  s.client_at ??= Infinity
  s.seen ??= []
  for (let i = 0; i < ATTRIBUTES.length; i++) {
    s[ATTRIBUTES[i]] ??= null
    s[ATTRIBUTE_AT[i]] ??= Infinity
  }
  return s
}

function writeVarint(b: Buffer, at: number, v: number): number {
  while (v >= 0x80) {
    b[at++] = (v & 0x7f) | 0x80
    v = Math.floor(v / 128)
  }
  b[at++] = v
  return at
}

const varintSize = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5)

/**
 * ASCII strings (ids, most paths, user agents) are copied a character a byte behind a tag of the
 * size they need: faster than a call into Buffer.write for strings this short (measured).
 */
function writeStr(b: Buffer, at: number, s: string): number {
  const n = s.length
  let j = at + varintSize(2 * n)
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0x80) return writeWide(b, at, s)
    b[j++] = c
  }
  writeVarint(b, at, 2 * n)
  return j
}

function writeWide(b: Buffer, at: number, s: string): number {
  if (LONE_SURROGATE.test(s)) {
    at = writeVarint(b, at, 2 * s.length + 1)
    for (let i = 0; i < s.length; i++, at += 2) b.writeUInt16LE(s.charCodeAt(i), at)
    return at
  }
  at = writeVarint(b, at, 2 * Buffer.byteLength(s, 'utf8'))
  return at + b.write(s, at, 'utf8')
}

function readStr(r: Reader): string {
  const tag = r.varint()
  if (tag % 2 === 0) return r.utf8(tag / 2)
  let s = ''
  for (let i = 0; i < (tag - 1) / 2; i++) s += String.fromCharCode(r.u16())
  return s
}
