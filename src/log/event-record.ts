/**
 * The event record, version 1: how the log stores a validated event (a `LoggedEvent`), and how the
 * stream reads it back. Binary, so that the fold decodes each event once and only the fields it
 * reads: parsing JSON text cost more than the rest of a replay's fold did.
 *
 *   record    = version:u8 (=1) type:u8 present:u32 hash_hi:u32 hash_lo:u32 ts:f64 received_at:f64
 *               site_id:text session_id:text field*
 *   text      = head:u16 bytes                       head: its bytes' count, bit 15 set when they are
 *                                                      UTF-16LE (a text holding a lone surrogate, which
 *                                                      UTF-8 cannot carry), else UTF-8; at most 32 767
 *                                                      (the schema's limits keep every text under 7 KiB)
 *   json      = length:u32 utf8                      (JSON text of an open-ended object)
 *   field     = the fields FIELDS lists, in its order, those whose bit (their index) is set in `present`
 *   number    = f64
 *   screen    = members:u8 f64*                       (width height viewport_width viewport_height pixel_ratio)
 *   vitals    = members:u8 f64*                       (lcp fid cls fcp ttfb inp)
 *   utm       = members:u8 text*                      (source medium campaign term content)
 *   revenue   = 0:u8 amount:f64 currency:text | 1:u8 amount:text currency:text
 *
 * Integers and floats are little-endian; `type` is the event type's index in EVENT_TYPES; a
 * `members` byte has bit i set when the i-th member listed is present. `hash_hi`/`hash_lo` are the
 * 64-bit hash of the event's site and session (`eventKey`), taken once at ingest: the stream's
 * identity of the session. A value that is not version 1 — the JSON text earlier versions stored,
 * or a foreign producer writes to a Kafka topic — is read by `readEvent` through `JSON.parse`;
 * any other first byte is refused with an error naming it.
 */
import { hash64 } from '../sketch/index.js'
import { EVENT_TYPES, eventKey, type EventType, type LoggedEvent } from '../schema/index.js'
import type { ProducerRecord } from './types.js'

export const EVENT_RECORD_VERSION = 1

const TEXT = 0
const JSON_TEXT = 1
const NUMBER = 2
const SCREEN = 3
const VITALS = 4
const UTM = 5
const REVENUE = 6

/** The optional fields in record order, each with its form; hot fields of the fold come first. */
const FIELDS = [
  ['path', TEXT], ['event_name', TEXT], ['referrer', TEXT], ['user_agent', TEXT], ['screen', SCREEN],
  ['utm', UTM], ['country', TEXT], ['visitor_id', TEXT], ['user_id', TEXT], ['hostname', TEXT], ['url', TEXT],
  ['revenue', REVENUE], ['event_id', TEXT], ['properties', JSON_TEXT], ['duration', NUMBER], ['title', TEXT],
  ['language', TEXT], ['error_name', TEXT], ['error_message', TEXT], ['error_stack', TEXT], ['provider', TEXT],
  ['vitals', VITALS], ['ad_click_ids', JSON_TEXT],
] as const satisfies readonly (readonly [keyof LoggedEvent, number])[]

/** each field's form by index, flat: read once per field of every record */
const FORMS = FIELDS.map(([, form]) => form)
const F = Object.fromEntries(FIELDS.map(([name], i) => [name, i])) as { [K in (typeof FIELDS)[number][0]]: number }
const SCREEN_MEMBERS = ['width', 'height', 'viewport_width', 'viewport_height', 'pixel_ratio'] as const
const VITALS_MEMBERS = ['lcp', 'fid', 'cls', 'fcp', 'ttfb', 'inp'] as const
const UTM_MEMBERS = ['source', 'medium', 'campaign', 'term', 'content'] as const
const TYPE_CODES = new Map<string, number>(EVENT_TYPES.map((t, i) => [t, i]))
const HEADER = 30
const MAX_TEXT = 0x7fff
/** unpaired surrogates only: in a /u pattern a pair is one code point, outside this range */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u
/** the text head's bit for UTF-16LE bytes */
const WIDE = 0x8000

type Screen = NonNullable<LoggedEvent['screen']>
type Vitals = NonNullable<LoggedEvent['vitals']>
type Utm = NonNullable<LoggedEvent['utm']>
type Revenue = NonNullable<LoggedEvent['revenue']>
type Properties = NonNullable<LoggedEvent['properties']>
type AdClickIds = NonNullable<LoggedEvent['ad_click_ids']>

/**
 * Where records are encoded: slices of a slab, so that a record costs neither an allocation of its
 * own nor a copy. A record that might not fit in what is left of the slab is encoded again into a
 * buffer of its own, sized from its JSON text (no string takes more than three bytes a character).
 */
const SLAB = 256 * 1024
const ROOM = 64 * 1024
let slab = Buffer.allocUnsafeSlow(SLAB)
let used = 0

/** Node's UTF-8 encoder without `write`'s argument handling (what `write` calls in the end) */
const utf8Into = (b: Buffer, s: string, at: number, room: number): number =>
  (b as Buffer & { utf8Write(s: string, at: number, max: number): number }).utf8Write(s, at, room)

/** texts up to this long are tried as ASCII in JavaScript first */
const SHORT = 48

const f64 = new Float64Array(1)
const f64Bytes = new Uint8Array(f64.buffer)
const EMPTY = Buffer.alloc(0)

/** Writes one record from `at` on, without Buffer's argument checks; `fits` turns false at the limit. */
class RecordWriter {
  b: Buffer = slab
  at = 0
  limit = 0
  fits = true

  reset(b: Buffer, at: number, limit: number): void {
    this.b = b
    this.at = at
    this.limit = limit
    this.fits = true
  }

  u8(v: number): void {
    this.b[this.at++] = v
  }

  u16(v: number): void {
    const b = this.b
    b[this.at] = v
    b[this.at + 1] = v >>> 8
    this.at += 2
  }

  u32(v: number, at = this.at): void {
    const b = this.b
    b[at] = v
    b[at + 1] = v >>> 8
    b[at + 2] = v >>> 16
    b[at + 3] = v >>> 24
    if (at === this.at) this.at += 4
  }

  f64(v: number): void {
    f64[0] = v
    const b = this.b
    const at = this.at
    for (let i = 0; i < 8; i++) b[at + i] = f64Bytes[i]
    this.at = at + 8
  }

  /** a text: its head, then UTF-8 (UTF-16LE when it holds a lone surrogate) */
  text(s: string): void {
    const room = this.limit - this.at - 2
    // a character takes at most 3 bytes: with less room than that left, the text may have been cut
    const len = s.length
    if (room < 3 * len) return this.#tight(s, room, 2)
    // short ASCII text, the most of it, byte by byte: cheaper than a call into the encoder
    if (len <= SHORT) {
      const b = this.b
      const to = this.at + 2
      let i = 0
      for (; i < len; i++) {
        const c = s.charCodeAt(i)
        if (c >= 0x80) break
        b[to + i] = c
      }
      if (i === len) {
        this.u16(len)
        this.at += len
        return
      }
    }
    const n = utf8Into(this.b, s, this.at + 2, room)
    // a lone surrogate became U+FFFD in UTF-8: the fold of the event as received and of the record
    // read back must see the same text (a text of ASCII alone, a byte a unit, holds none)
    if (n !== len && LONE_SURROGATE.test(s)) return this.#wide(s, room)
    this.#textHead(n, 0)
  }

  /** a text as UTF-16LE, every unit as it is */
  #wide(s: string, room: number): void {
    const n = 2 * s.length
    if (n > room) return this.#outOfRoom()
    this.b.write(s, this.at + 2, n, 'utf16le')
    this.#textHead(n, WIDE)
  }

  /** the head of a text whose `n` bytes are written after it */
  #textHead(n: number, wide: number): void {
    if (n > MAX_TEXT) throw new RangeError(`a text field of ${n} bytes does not fit an event record`)
    this.u16(n | wide)
    this.at += n
  }

  #outOfRoom(): void {
    this.fits = false
    this.at = this.limit
  }

  /** a JSON text: u32 length, then UTF-8 */
  json(s: string): void {
    const room = this.limit - this.at - 4
    if (room < 3 * s.length) return this.#tight(s, room, 4)
    const n = utf8Into(this.b, s, this.at + 4, room)
    this.u32(n)
    this.at += n
  }

  /** a text that may not fit: written when its bytes are known to, else the record is out of room */
  #tight(s: string, room: number, lengthBytes: number): void {
    const n = Buffer.byteLength(s)
    if (n > room) return this.#outOfRoom()
    if (lengthBytes === 2 && n !== s.length && LONE_SURROGATE.test(s)) return this.#wide(s, room)
    utf8Into(this.b, s, this.at + lengthBytes, room)
    if (lengthBytes === 2) return this.#textHead(n, 0)
    this.u32(n)
    this.at += n
  }
}

const writer = new RecordWriter()

/**
 * The record of a validated event whose site and session hash to `hi`/`lo`.
 *
 * @example encodeEvent(event, h.hi, h.lo) // then readEvent(bytes).site_id === event.site_id
 */
export function encodeEvent(e: LoggedEvent, hi: number, lo: number): Buffer {
  if (typeof e.site_id !== 'string' || typeof e.session_id !== 'string') throw new TypeError('an event record needs site_id and session_id as strings')
  const type = TYPE_CODES.get(e.type)
  if (type === undefined) throw new TypeError(`an event record cannot hold the event type ${JSON.stringify(e.type)}`)
  if (typeof e.ts !== 'number' || typeof e.received_at !== 'number') throw new TypeError('an event record needs ts and received_at as numbers')
  if (SLAB - used < ROOM) {
    slab = Buffer.allocUnsafeSlow(SLAB)
    used = 0
  }
  const w = writer
  w.reset(slab, used, SLAB)
  writeEvent(w, e, type, hi, lo)
  if (w.fits) {
    const out = slab.subarray(used, w.at)
    used = w.at
    return out
  }
  const own = Buffer.allocUnsafeSlow(3 * JSON.stringify(e).length + 512)
  w.reset(own, 0, own.length)
  writeEvent(w, e, type, hi, lo)
  return own.subarray(0, w.at)
}

/** is a field there: null is what a foreign producer's JSON may say for an absent one */
const has = (v: unknown): boolean => v !== undefined && v !== null

function writeEvent(w: RecordWriter, e: LoggedEvent, type: number, hi: number, lo: number): void {
  const start = w.at
  w.u8(EVENT_RECORD_VERSION)
  w.u8(type)
  w.at += 4 // present, written last
  w.u32(hi >>> 0)
  w.u32(lo >>> 0)
  w.f64(e.ts)
  w.f64(e.received_at)
  w.text(e.site_id)
  w.text(e.session_id)
  // one statement per field, in FIELDS' order (each its bit there): a loop over names would make
  // every read a keyed one
  let present = 0
  if (has(e.path)) (present |= 1 << F.path), w.text(e.path!)
  if (has(e.event_name)) (present |= 1 << F.event_name), w.text(e.event_name!)
  if (has(e.referrer)) (present |= 1 << F.referrer), w.text(e.referrer!)
  if (has(e.user_agent)) (present |= 1 << F.user_agent), w.text(e.user_agent!)
  if (has(e.screen)) (present |= 1 << F.screen), writeNumbers(w, e.screen!, SCREEN_MEMBERS)
  if (has(e.utm)) (present |= 1 << F.utm), writeUtm(w, e.utm!)
  if (has(e.country)) (present |= 1 << F.country), w.text(e.country!)
  if (has(e.visitor_id)) (present |= 1 << F.visitor_id), w.text(e.visitor_id!)
  if (has(e.user_id)) (present |= 1 << F.user_id), w.text(e.user_id!)
  if (has(e.hostname)) (present |= 1 << F.hostname), w.text(e.hostname!)
  if (has(e.url)) (present |= 1 << F.url), w.text(e.url!)
  if (has(e.revenue)) (present |= 1 << F.revenue), writeRevenue(w, e.revenue!)
  if (has(e.event_id)) (present |= 1 << F.event_id), w.text(e.event_id!)
  if (has(e.properties)) (present |= 1 << F.properties), w.json(JSON.stringify(e.properties))
  if (has(e.duration)) (present |= 1 << F.duration), w.f64(e.duration!)
  if (has(e.title)) (present |= 1 << F.title), w.text(e.title!)
  if (has(e.language)) (present |= 1 << F.language), w.text(e.language!)
  if (has(e.error_name)) (present |= 1 << F.error_name), w.text(e.error_name!)
  if (has(e.error_message)) (present |= 1 << F.error_message), w.text(e.error_message!)
  if (has(e.error_stack)) (present |= 1 << F.error_stack), w.text(e.error_stack!)
  if (has(e.provider)) (present |= 1 << F.provider), w.text(e.provider!)
  if (has(e.vitals)) (present |= 1 << F.vitals), writeNumbers(w, e.vitals!, VITALS_MEMBERS)
  if (has(e.ad_click_ids)) (present |= 1 << F.ad_click_ids), w.json(JSON.stringify(e.ad_click_ids))
  w.u32(present, start + 2)
}

/** an object of numbers (screen, vitals): a members byte, then each present member's f64 */
function writeNumbers(w: RecordWriter, o: Record<string, number | undefined>, members: readonly string[]): void {
  const at = w.at++
  let bits = 0
  for (let m = 0; m < members.length; m++) {
    const v = o[members[m]]
    if (v !== undefined) (bits |= 1 << m), w.f64(v)
  }
  w.b[at] = bits
}

function writeUtm(w: RecordWriter, u: Utm): void {
  const at = w.at++
  let bits = 0
  if (u.source !== undefined) (bits |= 1), w.text(u.source)
  if (u.medium !== undefined) (bits |= 2), w.text(u.medium)
  if (u.campaign !== undefined) (bits |= 4), w.text(u.campaign)
  if (u.term !== undefined) (bits |= 8), w.text(u.term)
  if (u.content !== undefined) (bits |= 16), w.text(u.content)
  w.b[at] = bits
}

function writeRevenue(w: RecordWriter, r: Revenue): void {
  if (typeof r.amount === 'number') w.u8(0), w.f64(r.amount)
  else w.u8(1), w.text(r.amount)
  w.text(r.currency)
}

/**
 * Little-endian reads without Buffer's argument checks, which cost more than the read in a loop
 * over every field of every record: the constructor checks that the fields end inside the record,
 * and a byte past the end reads as 0, so a bad length shows there.
 */
const u16 = (b: Buffer, at: number): number => b[at] | (b[at + 1] << 8)
const u32 = (b: Buffer, at: number): number => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 0x1000000

/** a little-endian f64, without Buffer's checks (nor the number Node's read boxes when not inlined) */
function f64At(b: Buffer, at: number): number {
  for (let i = 0; i < 8; i++) f64Bytes[i] = b[at + i]
  return f64[0]
}

/** Node's UTF-8 decoder without `toString`'s argument handling (what `toString` calls in the end) */
const utf8 = (b: Buffer, from: number, to: number): string => (b as Buffer & { utf8Slice(from: number, to: number): string }).utf8Slice(from, to)

/** the bytes of the text whose head is at `at` */
const textBytes = (b: Buffer, at: number): number => u16(b, at) & MAX_TEXT

/** the text whose head is at `at` */
function textAt(b: Buffer, at: number): string {
  const head = u16(b, at)
  const n = head & MAX_TEXT
  return head & WIDE ? b.toString('utf16le', at + 2, at + 2 + n) : utf8(b, at + 2, at + 2 + n)
}

/** slots of the text cache (a power of two) and the longest text it holds */
const CACHE_SLOTS = 4096
const CACHE_LONGEST = 256
const cached: string[] = new Array<string>(CACHE_SLOTS).fill('')

/**
 * The text whose head is at `at`, the string an earlier read of the same bytes made when it is still
 * cached: sites, pages, referrers, hosts, user agents and event names repeat from event to event, and a
 * fold that gets back the string it saw before allocates nothing for it (and every map keyed by it
 * finds its hash computed). Direct-mapped by a hash of the bytes and checked against them on a hit,
 * so a slot that another text took over is only a miss. Only ASCII is cached: then a string of as
 * many characters as there are bytes, each equal to its byte, is the text those bytes spell.
 */
function cachedTextAt(b: Buffer, at: number): string {
  const head = u16(b, at)
  const n = head & MAX_TEXT
  if (head & WIDE || n > CACHE_LONGEST) return textAt(b, at)
  const from = at + 2
  let h = 0x811c9dc5
  let high = 0
  for (let i = 0; i < n; i++) {
    const c = b[from + i]
    high |= c
    h = Math.imul(h ^ c, 0x01000193)
  }
  if (high & 0x80) return utf8(b, from, from + n)
  const slot = (h ^ (h >>> 15)) & (CACHE_SLOTS - 1)
  const s = cached[slot]
  if (s.length === n) {
    let i = 0
    while (i < n && s.charCodeAt(i) === b[from + i]) i++
    if (i === n) return s
  }
  return (cached[slot] = utf8(b, from, from + n))
}

/** bytes a field takes from `at` on */
function sizeAt(b: Buffer, at: number, form: number): number {
  switch (form) {
    case TEXT: return 2 + textBytes(b, at)
    case JSON_TEXT: return 4 + u32(b, at)
    case NUMBER: return 8
    case SCREEN:
    case VITALS: return 1 + 8 * bitCount(b[at])
    case UTM: {
      let p = at + 1
      for (let bits = b[at]; bits !== 0; bits &= bits - 1) p += 2 + textBytes(b, p)
      return p - at
    }
    default: { // REVENUE
      const p = at + 1 + (b[at] === 0 ? 8 : 2 + textBytes(b, at + 1))
      return p + 2 + textBytes(b, p) - at
    }
  }
}

function bitCount(v: number): number {
  let n = 0
  for (let bits = v; bits !== 0; bits &= bits - 1) n++
  return n
}

/** what JSON text of an object may start with: a brace, white space, a UTF-8 byte order mark */
const JSON_START = new Set([0x7b, 0x20, 0x09, 0x0a, 0x0d, 0xef])

const UNREAD: unique symbol = Symbol('unread')
type Lazy<T> = T | typeof UNREAD

/**
 * One event record, read lazily: the header at once, each field when first asked (then kept).
 * Reads as a `LoggedEvent` does, so the fold takes either; `toEvent()` gives the plain object.
 */
export class EventRecord {
  // set by `reuse` alone: read them, never write them
  bytes: Buffer = EMPTY
  type: EventType = EVENT_TYPES[0]
  ts = 0
  received_at = 0
  /**
   * the hash of the event's site and session, the stream's identity of the session, as int32 halves:
   * a uint32 past 2^31 would be a number object made for every call it is handed to
   */
  hashHi = 0
  hashLo = 0
  #present = 0
  /** where the optional fields start */
  #fields = 0
  #siteId: Lazy<string> = UNREAD
  #sessionId: Lazy<string> = UNREAD
  #path: Lazy<string | undefined> = UNREAD
  #eventName: Lazy<string | undefined> = UNREAD
  #referrer: Lazy<string | undefined> = UNREAD
  #userAgent: Lazy<string | undefined> = UNREAD
  #screen: Lazy<Screen | undefined> = UNREAD
  #utm: Lazy<Utm | undefined> = UNREAD
  #country: Lazy<string | undefined> = UNREAD
  #visitorId: Lazy<string | undefined> = UNREAD
  #userId: Lazy<string | undefined> = UNREAD
  #hostname: Lazy<string | undefined> = UNREAD
  #url: Lazy<string | undefined> = UNREAD
  #revenue: Lazy<Revenue | undefined> = UNREAD
  #eventId: Lazy<string | undefined> = UNREAD
  #properties: Lazy<Properties | undefined> = UNREAD

  /** Reads a version-1 record's header and where its fields lie; throws on anything else. */
  constructor(bytes: Buffer) {
    this.reuse(bytes)
  }

  /**
   * Makes this object the reader of another record, forgetting every field read from the last:
   * how a fold reads a batch without an object per record (`EventReaders`). Throws as the
   * constructor does; the object then reads no field until reused again.
   */
  reuse(bytes: Buffer): this {
    this.bytes = EMPTY
    this.#present = 0
    this.#siteId = this.#sessionId = UNREAD
    this.#path = this.#eventName = this.#referrer = this.#userAgent = this.#country = this.#visitorId = UNREAD
    this.#userId = this.#hostname = this.#url = this.#eventId = UNREAD
    this.#screen = this.#utm = this.#revenue = this.#properties = UNREAD
    if (bytes.length < HEADER + 4) throw new RangeError(`an event record of ${bytes.length} bytes is too short`)
    if (bytes[0] !== EVENT_RECORD_VERSION) throw new RangeError(`event record version ${bytes[0]} is not read by this build (it reads ${EVENT_RECORD_VERSION})`)
    const type = EVENT_TYPES[bytes[1]]
    if (type === undefined) throw new RangeError(`event record type ${bytes[1]} is unknown`)
    this.type = type
    this.hashHi = u32(bytes, 6) | 0
    this.hashLo = u32(bytes, 10) | 0
    this.ts = f64At(bytes, 14)
    this.received_at = f64At(bytes, 22)
    const fields = HEADER + 2 + textBytes(bytes, HEADER)
    this.#fields = fields + 2 + textBytes(bytes, fields)
    this.bytes = bytes
    this.#present = u32(bytes, 2)
    const end = this.#start(FIELDS.length)
    if (end > bytes.length) {
      this.bytes = EMPTY
      this.#present = 0
      throw new RangeError(`an event record of ${bytes.length} bytes says it holds ${end}`)
    }
    return this
  }

  /**
   * Where field `i` starts (where the record ends for FIELDS.length), walked from the first field:
   * a few reads, and each field is decoded once, so no table of offsets is allocated per record.
   */
  #start(i: number): number {
    const b = this.bytes
    let p = this.#fields
    for (let k = 0, bits = this.#present; k < i && bits !== 0; k++, bits >>>= 1) if ((bits & 1) !== 0) p += sizeAt(b, p, FORMS[k])
    return p
  }

  #text(i: number): string | undefined {
    if ((this.#present & (1 << i)) === 0) return undefined
    const at = this.#start(i)
    return textAt(this.bytes, at)
  }

  /** `#text` for a field whose values repeat across events (`cachedTextAt`) */
  #shared(i: number): string | undefined {
    if ((this.#present & (1 << i)) === 0) return undefined
    return cachedTextAt(this.bytes, this.#start(i))
  }

  #json<T>(i: number): T | undefined {
    if ((this.#present & (1 << i)) === 0) return undefined
    const at = this.#start(i)
    return JSON.parse(utf8(this.bytes, at + 4, at + 4 + u32(this.bytes, at))) as T
  }

  #numbers<T>(i: number, members: readonly string[]): T | undefined {
    if ((this.#present & (1 << i)) === 0) return undefined
    const b = this.bytes
    const at = this.#start(i)
    const out: Record<string, number> = {}
    let p = at + 1
    for (let m = 0, bits = b[at]; m < members.length; m++) {
      if ((bits & (1 << m)) === 0) continue
      out[members[m]] = f64At(b, p)
      p += 8
    }
    return out as T
  }

  get site_id(): string {
    const kept = this.#siteId
    if (kept !== UNREAD) return kept
    // consecutive events mostly share a site: the same string makes every map keyed by it cheaper
    return (this.#siteId = cachedTextAt(this.bytes, HEADER))
  }

  get session_id(): string {
    const kept = this.#sessionId
    if (kept !== UNREAD) return kept
    return (this.#sessionId = textAt(this.bytes, HEADER + 2 + textBytes(this.bytes, HEADER)))
  }

  get path(): string | undefined {
    return this.#path === UNREAD ? (this.#path = this.#shared(F.path)) : this.#path
  }

  get event_name(): string | undefined {
    return this.#eventName === UNREAD ? (this.#eventName = this.#shared(F.event_name)) : this.#eventName
  }

  get referrer(): string | undefined {
    return this.#referrer === UNREAD ? (this.#referrer = this.#shared(F.referrer)) : this.#referrer
  }

  get user_agent(): string | undefined {
    return this.#userAgent === UNREAD ? (this.#userAgent = this.#shared(F.user_agent)) : this.#userAgent
  }

  get screen(): Screen | undefined {
    return this.#screen === UNREAD ? (this.#screen = this.#numbers<Screen>(F.screen, SCREEN_MEMBERS)) : this.#screen
  }

  /** `screen.width` alone, without the object `screen` makes (the fold reads nothing else of it) */
  get screenWidth(): number | undefined {
    const screen = this.#screen
    if (screen !== UNREAD) return screen?.width
    if ((this.#present & (1 << F.screen)) === 0) return undefined
    const at = this.#start(F.screen)
    // width is the first member: present when bit 0 is
    return (this.bytes[at] & 1) === 0 ? undefined : f64At(this.bytes, at + 1)
  }

  get utm(): Utm | undefined {
    if (this.#utm !== UNREAD) return this.#utm
    if ((this.#present & (1 << F.utm)) === 0) return (this.#utm = undefined)
    const b = this.bytes
    const at = this.#start(F.utm)
    const out: Record<string, string> = {}
    let p = at + 1
    for (let m = 0, bits = b[at]; m < UTM_MEMBERS.length; m++) {
      if ((bits & (1 << m)) === 0) continue
      out[UTM_MEMBERS[m]] = cachedTextAt(b, p)
      p += 2 + textBytes(b, p)
    }
    return (this.#utm = out as Utm)
  }

  get country(): string | undefined {
    return this.#country === UNREAD ? (this.#country = this.#shared(F.country)) : this.#country
  }

  get visitor_id(): string | undefined {
    return this.#visitorId === UNREAD ? (this.#visitorId = this.#text(F.visitor_id)) : this.#visitorId
  }

  get user_id(): string | undefined {
    return this.#userId === UNREAD ? (this.#userId = this.#text(F.user_id)) : this.#userId
  }

  get hostname(): string | undefined {
    return this.#hostname === UNREAD ? (this.#hostname = this.#shared(F.hostname)) : this.#hostname
  }

  get url(): string | undefined {
    return this.#url === UNREAD ? (this.#url = this.#text(F.url)) : this.#url
  }

  get revenue(): Revenue | undefined {
    if (this.#revenue !== UNREAD) return this.#revenue
    if ((this.#present & (1 << F.revenue)) === 0) return (this.#revenue = undefined)
    const b = this.bytes
    const at = this.#start(F.revenue)
    let amount: string | number
    let p: number
    if (b[at] === 0) {
      amount = f64At(b, at + 1)
      p = at + 9
    } else {
      amount = textAt(b, at + 1)
      p = at + 3 + textBytes(b, at + 1)
    }
    const currency = textAt(b, p)
    return (this.#revenue = { amount, currency })
  }

  get event_id(): string | undefined {
    return this.#eventId === UNREAD ? (this.#eventId = this.#text(F.event_id)) : this.#eventId
  }

  get properties(): Properties | undefined {
    return this.#properties === UNREAD ? (this.#properties = this.#json<Properties>(F.properties)) : this.#properties
  }

  /**
   * Where a text field's UTF-8 bytes lie in `bytes`, for comparing them there rather than making a
   * string of them: from the returned offset on, `textLength(from)` of them; -1 when the record has
   * no such field, -2 when its text is held as UTF-16LE (it holds a lone surrogate: read the field).
   */
  textFrom(name: 'visitor_id' | 'user_id' | 'referrer' | 'hostname' | 'url'): number {
    const i = F[name]
    if ((this.#present & (1 << i)) === 0) return -1
    const at = this.#start(i)
    return u16(this.bytes, at) & WIDE ? -2 : at + 2
  }

  /** the bytes of the text `textFrom` found at `from` */
  textLength(from: number): number {
    return textBytes(this.bytes, from - 2)
  }

  // the fields no fold reads: decoded on each ask, never kept
  get duration(): number | undefined {
    return (this.#present & (1 << F.duration)) === 0 ? undefined : f64At(this.bytes, this.#start(F.duration))
  }

  get title(): string | undefined { return this.#text(F.title) }
  get language(): string | undefined { return this.#text(F.language) }
  get error_name(): string | undefined { return this.#text(F.error_name) }
  get error_message(): string | undefined { return this.#text(F.error_message) }
  get error_stack(): string | undefined { return this.#text(F.error_stack) }
  get provider(): string | undefined { return this.#text(F.provider) }
  get vitals(): Vitals | undefined { return this.#numbers<Vitals>(F.vitals, VITALS_MEMBERS) }
  get ad_click_ids(): AdClickIds | undefined { return this.#json<AdClickIds>(F.ad_click_ids) }

  /**
   * Sets what the fields read as from the event this record was encoded from, so that the fold
   * of an event just received decodes nothing (`e` must be the event `bytes` encode).
   */
  primeFrom(e: LoggedEvent): this {
    this.#siteId = e.site_id
    this.#sessionId = e.session_id
    this.#path = e.path
    this.#eventName = e.event_name
    this.#referrer = e.referrer
    this.#userAgent = e.user_agent
    this.#screen = e.screen
    this.#utm = e.utm
    this.#country = e.country
    this.#visitorId = e.visitor_id
    this.#userId = e.user_id
    this.#hostname = e.hostname
    this.#url = e.url
    this.#revenue = e.revenue
    this.#eventId = e.event_id
    this.#properties = e.properties
    return this
  }

  /** The whole event as a plain object, as it was validated (absent fields are absent). */
  toEvent(): LoggedEvent {
    const out: Record<string, unknown> = { type: this.type, site_id: this.site_id, session_id: this.session_id }
    for (const [name] of FIELDS) {
      const v = this[name]
      if (v !== undefined) out[name] = v
    }
    out.ts = this.ts
    out.received_at = this.received_at
    return out as LoggedEvent
  }
}

/**
 * The event a log record's value holds: a version-1 record as it is, JSON text (earlier versions,
 * foreign producers) parsed, hashed and encoded into one. Throws on anything else. Given `into`, that
 * reader is reused for it (`EventRecord.reuse`) rather than a new one made.
 */
export function readEvent(value: Buffer, into?: EventRecord): EventRecord {
  if (!JSON_START.has(value[0])) return into ? into.reuse(value) : new EventRecord(value)
  const e = JSON.parse(value.toString()) as LoggedEvent
  if (e === null || typeof e !== 'object') throw new TypeError('a log record holds JSON that is not an event object')
  const h = hash64(eventKey(e.site_id, e.session_id))
  const bytes = encodeEvent(e, h.hi, h.lo)
  return into ? into.reuse(bytes) : new EventRecord(bytes)
}

/**
 * Readers for the records of a batch, kept from batch to batch, so that a fold reads records without
 * an object per record: `take` a set, read the batch's values with it (`readEventAt`), and `give` it
 * back once nothing reads those records any more (the next batch read with it overwrites them).
 * Folds that run at once each take a set of their own.
 */
export class EventReaders {
  readonly #free: EventRecord[][] = []

  take(): EventRecord[] {
    return this.#free.pop() ?? []
  }

  give(readers: EventRecord[]): void {
    this.#free.push(readers)
  }
}

/** The record `value` read with the `i`-th reader of a set taken from `EventReaders` (one made if it has none yet). */
export function readEventAt(readers: EventRecord[], i: number, value: Buffer): EventRecord {
  const into = readers[i]
  if (into !== undefined) return readEvent(value, into)
  return (readers[i] = readEvent(value))
}

/**
 * What ingest appends for an event it validated: keyed by site and session, its record handed to
 * the live fold as it is (primed with the event, so that fold decodes nothing).
 */
export function eventLogRecord(e: LoggedEvent): ProducerRecord & { decoded: EventRecord } {
  const key = eventKey(e.site_id, e.session_id)
  const h = hash64(key)
  const decoded = new EventRecord(encodeEvent(e, h.hi, h.lo)).primeFrom(e)
  return { key, value: decoded.bytes, timestamp: e.ts, decoded }
}
