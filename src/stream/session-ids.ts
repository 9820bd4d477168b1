import { ByteSlabs, MAX_SLAB_BYTES } from './byte-slabs.js'

/** the identities of a hot session, by position in its record */
export const SESSION_ID = 0
export const VISITOR_ID = 1
export const USER_ID = 2
export type IdField = typeof SESSION_ID | typeof VISITOR_ID | typeof USER_ID

const NULL = 0xffff
const MAX_UNITS = 0x7ffe

/**
 * The three identities of each hot session (session id, visitor id, user id) as one record in
 * byte slabs, not three heap strings: they are unique per session, so interning would not share
 * them, and a string per session is what made old-generation GC slow. A record is, per field in
 * order, `head:u16 data`: head 0xffff for null, else units × 2 + wide, data one byte per unit
 * (Latin-1: every id the API accepts) or, when a unit is over 0xff, two (UTF-16LE, which also
 * keeps a lone surrogate as it is). A record too large for a slab (only a value over the API's
 * limits could make one) is kept as strings under a negative reference.
 */
export class SessionIds {
  readonly #slabs = new ByteSlabs()
  readonly #oversized = new Map<number, (string | null)[]>()
  /** (−1 is never a reference: callers may use it for "no record") */
  #nextOversized = -2

  put(session: string, visitor: string | null, user: string | null): number {
    const wideSession = !isNarrow(session)
    const wideVisitor = visitor !== null && !isNarrow(visitor)
    const wideUser = user !== null && !isNarrow(user)
    const size = 6 + dataBytes(session, wideSession) + dataBytes(visitor, wideVisitor) + dataBytes(user, wideUser)
    if (size > MAX_SLAB_BYTES || session.length > MAX_UNITS || (visitor?.length ?? 0) > MAX_UNITS || (user?.length ?? 0) > MAX_UNITS) {
      const ref = this.#nextOversized--
      this.#oversized.set(ref, [session, visitor, user])
      return ref
    }
    const ref = this.#slabs.alloc(size)
    const b = this.#slabs.bytes(ref)
    let at = this.#slabs.offset(ref)
    at = write(b, at, session, wideSession)
    at = write(b, at, visitor, wideVisitor)
    write(b, at, user, wideUser)
    return ref
  }

  free(ref: number): void {
    if (ref < 0) this.#oversized.delete(ref)
    else this.#slabs.free(ref)
  }

  get(ref: number, field: IdField): string | null {
    if (ref < 0) return this.#oversized.get(ref)![field]!
    const b = this.#slabs.bytes(ref)
    const at = skip(b, this.#slabs.offset(ref), field)
    const head = b[at] | (b[at + 1] << 8)
    if (head === NULL) return null
    const units = head >>> 1
    return head & 1 ? b.toString('utf16le', at + 2, at + 2 + 2 * units) : b.toString('latin1', at + 2, at + 2 + units)
  }

  /**
   * Whether the field holds the ASCII text of `b` from `from`, `n` bytes, compared where both lie;
   * undefined when that cannot be told so (a byte beyond ASCII, a record held as strings): compare
   * strings then.
   */
  equalsAscii(ref: number, field: IdField, b: Uint8Array, from: number, n: number): boolean | undefined {
    if (ref < 0) return undefined
    for (let i = 0; i < n; i++) if (b[from + i] >= 0x80) return undefined
    const slab = this.#slabs.bytes(ref)
    let at = skip(slab, this.#slabs.offset(ref), field)
    const head = slab[at] | (slab[at + 1] << 8)
    // a wide record holds a unit over 0xff, which no ASCII text equals
    if (head === NULL || head >>> 1 !== n || (head & 1) !== 0) return false
    at += 2
    for (let i = 0; i < n; i++) if (slab[at + i] !== b[from + i]) return false
    return true
  }

  /** whether the field is null */
  isNull(ref: number, field: IdField): boolean {
    if (ref < 0) return this.#oversized.get(ref)![field] === null
    const b = this.#slabs.bytes(ref)
    const at = skip(b, this.#slabs.offset(ref), field)
    return (b[at] | (b[at + 1] << 8)) === NULL
  }

  /** whether the field holds `s`, without building a string */
  equals(ref: number, field: IdField, s: string): boolean {
    if (ref < 0) return this.#oversized.get(ref)![field] === s
    const b = this.#slabs.bytes(ref)
    let at = skip(b, this.#slabs.offset(ref), field)
    const head = b[at] | (b[at + 1] << 8)
    if (head === NULL || head >>> 1 !== s.length) return false
    at += 2
    if (head & 1) {
      for (let i = 0; i < s.length; i++, at += 2) if ((b[at] | (b[at + 1] << 8)) !== s.charCodeAt(i)) return false
    } else {
      for (let i = 0; i < s.length; i++) if (b[at + i] !== s.charCodeAt(i)) return false
    }
    return true
  }

  /** A record with one field changed; the old one is freed. */
  with(ref: number, field: IdField, value: string | null): number {
    const ids = [this.get(ref, SESSION_ID)!, this.get(ref, VISITOR_ID), this.get(ref, USER_ID)] as const
    this.free(ref)
    return this.put(field === SESSION_ID ? value! : ids[0], field === VISITOR_ID ? value : ids[1], field === USER_ID ? value : ids[2])
  }

  /** bytes of slab chunks and oversized strings */
  memoryBytes(): number {
    let n = this.#slabs.memoryBytes()
    for (const ids of this.#oversized.values()) for (const s of ids) n += 2 * (s?.length ?? 0) + 16
    return n
  }
}

function isNarrow(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false
  return true
}

const dataBytes = (s: string | null, wide: boolean): number => (s === null ? 0 : wide ? 2 * s.length : s.length)

function write(b: Buffer, at: number, s: string | null, wide: boolean): number {
  if (s === null) {
    b[at] = 0xff
    b[at + 1] = 0xff
    return at + 2
  }
  const head = 2 * s.length + (wide ? 1 : 0)
  b[at++] = head & 0xff
  b[at++] = head >>> 8
  if (wide) {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i)
      b[at++] = c & 0xff
      b[at++] = c >>> 8
    }
  } else {
    for (let i = 0; i < s.length; i++) b[at++] = s.charCodeAt(i)
  }
  return at
}

/** the offset of a field's head in a record starting at `at` */
function skip(b: Buffer, at: number, field: IdField): number {
  for (let f = 0; f < field; f++) {
    const head = b[at] | (b[at + 1] << 8)
    at += 2 + (head === NULL ? 0 : (head >>> 1) << (head & 1))
  }
  return at
}
