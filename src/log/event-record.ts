/**
 * The event record, version 1: how the log stores a validated event (a `LoggedEvent`), and how the
 * stream reads it back. Binary, so that the fold decodes each event once and only the fields it
 * reads: parsing JSON text cost more than the rest of a replay's fold did.
 *
 *   record    = version:u8 (=1) type:u8 present:u32 hash_hi:u32 hash_lo:u32 ts:f64 received_at:f64
 *               site_id:text session_id:text field*
 *   text      = length:u16 utf8                      (the schema's limits keep every text under 64 KiB)
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
const MAX_TEXT = 0xffff

type Screen = NonNullable<LoggedEvent['screen']>
type Vitals = NonNullable<LoggedEvent['vitals']>
type Utm = NonNullable<LoggedEvent['utm']>
type Revenue = NonNullable<LoggedEvent['revenue']>
type Properties = NonNullable<LoggedEvent['properties']>
type AdClickIds = NonNullable<LoggedEvent['ad_click_ids']>

let scratch = Buffer.allocUnsafe(64 * 1024)

/** The most bytes `e` can take, so that the scratch buffer never overflows mid-write. */
function bound(e: LoggedEvent, jsons: (string | undefined)[]): number {
  const fields = e as unknown as Record<string, unknown>
  // the numbers (duration, screen, vitals, a numeric amount) and members bytes take under 128
  let n = HEADER + 128 + 4 + 3 * (e.site_id.length + e.session_id.length)
  for (let i = 0; i < FIELDS.length; i++) {
    const v = fields[FIELDS[i][0]]
    if (typeof v === 'string') n += 2 + 3 * v.length
  }
  for (const s of jsons) if (s !== undefined) n += 4 + 3 * s.length
  const utm = e.utm
  if (utm) for (const m of UTM_MEMBERS) n += 2 + 3 * (utm[m]?.length ?? 0)
  const revenue = e.revenue
  if (revenue) n += 2 + 3 * (typeof revenue.amount === 'string' ? revenue.amount.length : 0) + 2 + 3 * revenue.currency.length
  return n
}

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
  const properties = e.properties === undefined ? undefined : JSON.stringify(e.properties)
  const adClickIds = e.ad_click_ids === undefined ? undefined : JSON.stringify(e.ad_click_ids)
  const size = bound(e, [properties, adClickIds])
  if (size > scratch.length) scratch = Buffer.allocUnsafe(size)
  const b = scratch
  b[0] = EVENT_RECORD_VERSION
  b[1] = type
  b.writeUInt32LE(hi >>> 0, 6)
  b.writeUInt32LE(lo >>> 0, 10)
  b.writeDoubleLE(e.ts, 14)
  b.writeDoubleLE(e.received_at, 22)
  let at = writeText(b, HEADER, e.site_id)
  at = writeText(b, at, e.session_id)
  let present = 0
  const fields = e as unknown as Record<string, unknown>
  for (let i = 0; i < FIELDS.length; i++) {
    const [name, form] = FIELDS[i]
    const v = fields[name]
    // null: what a foreign producer's JSON may say for an absent field
    if (v === undefined || v === null) continue
    present |= 1 << i
    switch (form) {
      case TEXT: at = writeText(b, at, v as string); break
      case JSON_TEXT: at = writeJson(b, at, name === 'properties' ? properties! : adClickIds!); break
      case NUMBER: at = b.writeDoubleLE(v as number, at); break
      case SCREEN: at = writeNumbers(b, at, v as Record<string, number | undefined>, SCREEN_MEMBERS); break
      case VITALS: at = writeNumbers(b, at, v as Record<string, number | undefined>, VITALS_MEMBERS); break
      case UTM: at = writeUtm(b, at, v); break
      case REVENUE: at = writeRevenue(b, at, v as Revenue); break
    }
  }
  b.writeUInt32LE(present >>> 0, 2)
  const out = Buffer.allocUnsafe(at)
  b.copy(out, 0, 0, at)
  return out
}

function writeText(b: Buffer, at: number, s: string): number {
  const n = b.write(s, at + 2)
  if (n > MAX_TEXT) throw new RangeError(`a text field of ${n} bytes does not fit an event record`)
  b.writeUInt16LE(n, at)
  return at + 2 + n
}

function writeJson(b: Buffer, at: number, s: string): number {
  const n = b.write(s, at + 4)
  b.writeUInt32LE(n, at)
  return at + 4 + n
}

function writeNumbers(b: Buffer, at: number, o: Record<string, number | undefined>, members: readonly string[]): number {
  let bits = 0
  let p = at + 1
  for (let i = 0; i < members.length; i++) {
    const v = o[members[i]]
    if (v === undefined) continue
    bits |= 1 << i
    p = b.writeDoubleLE(v, p)
  }
  b[at] = bits
  return p
}

function writeUtm(b: Buffer, at: number, utm: Utm): number {
  let bits = 0
  let p = at + 1
  for (let i = 0; i < UTM_MEMBERS.length; i++) {
    const v = utm[UTM_MEMBERS[i]]
    if (v === undefined) continue
    bits |= 1 << i
    p = writeText(b, p, v)
  }
  b[at] = bits
  return p
}

function writeRevenue(b: Buffer, at: number, r: Revenue): number {
  let p: number
  if (typeof r.amount === 'number') {
    b[at] = 0
    p = b.writeDoubleLE(r.amount, at + 1)
  } else {
    b[at] = 1
    p = writeText(b, at + 1, r.amount)
  }
  return writeText(b, p, r.currency)
}

/**
 * Little-endian reads without Buffer's argument checks, which cost more than the read in a loop
 * over every field of every record: the constructor checks that the fields end inside the record,
 * and a byte past the end reads as 0, so a bad length shows there.
 */
const u16 = (b: Buffer, at: number): number => b[at] | (b[at + 1] << 8)
const u32 = (b: Buffer, at: number): number => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)) + b[at + 3] * 0x1000000

/** Node's UTF-8 decoder without `toString`'s argument handling (what `toString` calls in the end) */
const utf8 = (b: Buffer, from: number, to: number): string => (b as Buffer & { utf8Slice(from: number, to: number): string }).utf8Slice(from, to)

/** bytes a field takes from `at` on */
function sizeAt(b: Buffer, at: number, form: number): number {
  switch (form) {
    case TEXT: return 2 + u16(b, at)
    case JSON_TEXT: return 4 + u32(b, at)
    case NUMBER: return 8
    case SCREEN:
    case VITALS: return 1 + 8 * bitCount(b[at])
    case UTM: {
      let p = at + 1
      for (let bits = b[at]; bits !== 0; bits &= bits - 1) p += 2 + u16(b, p)
      return p - at
    }
    default: { // REVENUE
      const p = at + 1 + (b[at] === 0 ? 8 : 2 + u16(b, at + 1))
      return p + 2 + u16(b, p) - at
    }
  }
}

function bitCount(v: number): number {
  let n = 0
  for (let bits = v; bits !== 0; bits &= bits - 1) n++
  return n
}

/**
 * The site of a record, the previous record's string when the bytes are the same: consecutive
 * events mostly share a site, and the same string object makes every map keyed by it cheaper.
 */
let lastSite = ''
let lastSiteBytes = Buffer.alloc(0)
function siteOf(b: Buffer): string {
  const n = u16(b, HEADER)
  const from = HEADER + 2
  if (n === lastSiteBytes.length) {
    let same = true
    for (let i = 0; i < n; i++) {
      if (b[from + i] !== lastSiteBytes[i]) {
        same = false
        break
      }
    }
    if (same) return lastSite
  }
  lastSiteBytes = Buffer.from(b.subarray(from, from + n))
  return (lastSite = utf8(b, from, from + n))
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
  readonly bytes: Buffer
  readonly type: EventType
  readonly ts: number
  readonly received_at: number
  /** the hash of the event's site and session: the stream's identity of the session */
  readonly hashHi: number
  readonly hashLo: number
  readonly #present: number
  /** where the optional fields start */
  readonly #fields: number
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
    if (bytes.length < HEADER + 4) throw new RangeError(`an event record of ${bytes.length} bytes is too short`)
    if (bytes[0] !== EVENT_RECORD_VERSION) throw new RangeError(`event record version ${bytes[0]} is not read by this build (it reads ${EVENT_RECORD_VERSION})`)
    const type = EVENT_TYPES[bytes[1]]
    if (type === undefined) throw new RangeError(`event record type ${bytes[1]} is unknown`)
    this.bytes = bytes
    this.type = type
    this.#present = u32(bytes, 2)
    this.hashHi = u32(bytes, 6)
    this.hashLo = u32(bytes, 10)
    this.ts = bytes.readDoubleLE(14)
    this.received_at = bytes.readDoubleLE(22)
    const fields = HEADER + 2 + u16(bytes, HEADER)
    this.#fields = fields + 2 + u16(bytes, fields)
    const end = this.#start(FIELDS.length)
    if (end > bytes.length) throw new RangeError(`an event record of ${bytes.length} bytes says it holds ${end}`)
  }

  /**
   * Where field `i` starts (where the record ends for FIELDS.length), walked from the first field:
   * a few reads, and each field is decoded once, so no table of offsets is allocated per record.
   */
  #start(i: number): number {
    const b = this.bytes
    let p = this.#fields
    for (let k = 0, bits = this.#present; k < i && bits !== 0; k++, bits >>>= 1) {
      if ((bits & 1) === 0) continue
      const form = FORMS[k]
      p += form === TEXT ? 2 + u16(b, p) : sizeAt(b, p, form)
    }
    return p
  }

  #text(i: number): string | undefined {
    if ((this.#present & (1 << i)) === 0) return undefined
    const at = this.#start(i)
    return utf8(this.bytes, at + 2, at + 2 + u16(this.bytes, at))
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
      out[members[m]] = b.readDoubleLE(p)
      p += 8
    }
    return out as T
  }

  get site_id(): string {
    const kept = this.#siteId
    if (kept !== UNREAD) return kept
    return (this.#siteId = siteOf(this.bytes))
  }

  get session_id(): string {
    const kept = this.#sessionId
    if (kept !== UNREAD) return kept
    const at = HEADER + 2 + u16(this.bytes, HEADER)
    return (this.#sessionId = utf8(this.bytes, at + 2, at + 2 + u16(this.bytes, at)))
  }

  get path(): string | undefined {
    return this.#path === UNREAD ? (this.#path = this.#text(F.path)) : this.#path
  }

  get event_name(): string | undefined {
    return this.#eventName === UNREAD ? (this.#eventName = this.#text(F.event_name)) : this.#eventName
  }

  get referrer(): string | undefined {
    return this.#referrer === UNREAD ? (this.#referrer = this.#text(F.referrer)) : this.#referrer
  }

  get user_agent(): string | undefined {
    return this.#userAgent === UNREAD ? (this.#userAgent = this.#text(F.user_agent)) : this.#userAgent
  }

  get screen(): Screen | undefined {
    return this.#screen === UNREAD ? (this.#screen = this.#numbers<Screen>(F.screen, SCREEN_MEMBERS)) : this.#screen
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
      const n = u16(b, p)
      out[UTM_MEMBERS[m]] = utf8(b, p + 2, p + 2 + n)
      p += 2 + n
    }
    return (this.#utm = out as Utm)
  }

  get country(): string | undefined {
    return this.#country === UNREAD ? (this.#country = this.#text(F.country)) : this.#country
  }

  get visitor_id(): string | undefined {
    return this.#visitorId === UNREAD ? (this.#visitorId = this.#text(F.visitor_id)) : this.#visitorId
  }

  get user_id(): string | undefined {
    return this.#userId === UNREAD ? (this.#userId = this.#text(F.user_id)) : this.#userId
  }

  get hostname(): string | undefined {
    return this.#hostname === UNREAD ? (this.#hostname = this.#text(F.hostname)) : this.#hostname
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
      amount = b.readDoubleLE(at + 1)
      p = at + 9
    } else {
      const n = u16(b, at + 1)
      amount = utf8(b, at + 3, at + 3 + n)
      p = at + 3 + n
    }
    const currency = utf8(b, p + 2, p + 2 + u16(b, p))
    return (this.#revenue = { amount, currency })
  }

  get event_id(): string | undefined {
    return this.#eventId === UNREAD ? (this.#eventId = this.#text(F.event_id)) : this.#eventId
  }

  get properties(): Properties | undefined {
    return this.#properties === UNREAD ? (this.#properties = this.#json<Properties>(F.properties)) : this.#properties
  }

  // the fields no fold reads: decoded on each ask, never kept
  get duration(): number | undefined {
    return (this.#present & (1 << F.duration)) === 0 ? undefined : this.bytes.readDoubleLE(this.#start(F.duration))
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
 * foreign producers) parsed, hashed and encoded into one. Throws on anything else.
 */
export function readEvent(value: Buffer): EventRecord {
  if (!JSON_START.has(value[0])) return new EventRecord(value)
  const e = JSON.parse(value.toString()) as LoggedEvent
  if (e === null || typeof e !== 'object') throw new TypeError('a log record holds JSON that is not an event object')
  const h = hash64(eventKey(e.site_id, e.session_id))
  return new EventRecord(encodeEvent(e, h.hi, h.lo))
}

/** The record ingest logs for an event it validated (`key` is its `eventKey`), ready for the live fold. */
export function eventRecordOf(e: LoggedEvent, key: string): EventRecord {
  const h = hash64(key)
  return new EventRecord(encodeEvent(e, h.hi, h.lo)).primeFrom(e)
}
