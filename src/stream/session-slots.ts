/*
 * The slot layout of a SessionTable (session-table.ts) and the mechanics under it: one slot per
 * session as fields of two typed arrays (in pages), an open-addressing index from the 64-bit
 * session hash to the slot, a doubly linked list in least-recently-used order, and a free list.
 */

/** float64 fields of a slot */
export const FIRST = 0
export const LAST = 1
export const ENTRY_AT = 2
export const EXIT_AT = 3
export const REFERRER_AT = 4
export const CLIENT_AT = 5
/** NaN while null (JSON, where screen widths come from, has no NaN) */
export const SCREEN = 6
/**
 * when the slot was last used, in processing time (epoch ms of the table's clock): idleness is
 * measured by it, never by event time, or an import of last month's events would find every
 * session idle the moment it is folded
 */
export const USED_AT = 7
/** when each attribute (docs/api.md §9.4) was set: +Infinity while none */
export const REF_HOST_AT = 8
export const UTM_SOURCE_AT = 9
export const UTM_MEDIUM_AT = 10
export const UTM_CAMPAIGN_AT = 11
export const COUNTRY_AT = 12
export const FLOATS = 13

/** int32 fields of a slot: the hash, string pool ids (0: null), references, LRU links, flags */
export const HI = 0
export const LO = 1
export const SITE = 2
export const ENTRY = 3
export const EXIT = 4
export const REFERRER = 5
export const USER_AGENT = 6
export const IDS = 7
export const SEEN = 8
const PREV = 9
export const NEXT = 10
/** flags in the low bits (USED here, the table's own above it), the table's counts higher up */
export const META = 11
/** the hour (`hourKey`) this session was last counted in, 0 for none: the fold counts a session once an hour, not once an event */
export const COUNTED_HOUR = 12
/** the attributes, string pool ids like the others */
export const REF_HOST = 13
export const UTM_SOURCE = 14
export const UTM_MEDIUM = 15
export const UTM_CAMPAIGN = 16
export const COUNTRY = 17
/** the day this session's attributes were last counted in, 0 for none: once a day, not once an event */
export const COUNTED_DAY = 18
export const INTS = 19

/** a session lives in the slot (else it is on the free list) */
export const USED = 4

const NONE = -1
/**
 * Slots live in pages of 2^13, and the index in 256 sub-tables chosen by the hash's top bits, so
 * that growing never copies or rehashes everything at once: doubling one array of 512k slots and
 * rehashing them stalled the event loop ~130 ms (measured); adding a page, or doubling one
 * sub-table of ~2k entries, takes well under a millisecond.
 */
const PAGE_BITS = 13
const PAGE_SLOTS = 1 << PAGE_BITS
const PAGE_MASK = PAGE_SLOTS - 1
const SUB_BITS = 8
const SUBS = 1 << SUB_BITS
const MIN_SUB = 16

export class SessionSlots {
  readonly #floats: Float64Array[] = []
  readonly #ints: Int32Array[] = []
  /** per sub-table: slot + 1, 0 for empty; at most half full */
  readonly #index: Int32Array[] = Array.from({ length: SUBS }, () => new Int32Array(MIN_SUB))
  readonly #indexUsed = new Int32Array(SUBS)
  #size = 0
  #free = NONE
  #head = NONE
  #tail = NONE
  /** processing time stamped on slots as they are used (epoch ms); the owner moves it forward */
  now = 0

  /** the page of float64 fields holding slot `s` (FLOATS a slot, from `floatAt(s)`) */
  floatsOf(s: number): Float64Array {
    return this.#floats[s >>> PAGE_BITS]
  }

  floatAt(s: number): number {
    return (s & PAGE_MASK) * FLOATS
  }

  /** the page of int32 fields holding slot `s` (INTS a slot, from `intAt(s)`) */
  intsOf(s: number): Int32Array {
    return this.#ints[s >>> PAGE_BITS]
  }

  intAt(s: number): number {
    return (s & PAGE_MASK) * INTS
  }

  get size(): number {
    return this.#size
  }

  /** the least recently used slot, or -1 */
  get head(): number {
    return this.#head
  }

  /** the slot used next after `s`, or -1 */
  next(s: number): number {
    return this.#ints[s >>> PAGE_BITS][(s & PAGE_MASK) * INTS + NEXT]
  }

  /** The slot of a session hash, or -1. */
  find(hi: number, lo: number): number {
    hi |= 0
    lo |= 0
    const h = mix(hi, lo)
    const index = this.#index[h >>> (32 - SUB_BITS)]
    const mask = index.length - 1
    for (let p = h & mask; ; p = (p + 1) & mask) {
      const v = index[p]
      if (v === 0) return NONE
      const s = v - 1
      const I = this.#ints[s >>> PAGE_BITS]
      const o = (s & PAGE_MASK) * INTS
      if (I[o + HI] === hi && I[o + LO] === lo) return s
    }
  }

  /** A slot for a hash that has none, most recently used; its int32 fields are 0 but the hash and META (USED). */
  alloc(hi: number, lo: number): number {
    if (this.#free === NONE) this.#addPage()
    const s = this.#free
    const I = this.intsOf(s)
    const o = this.intAt(s)
    this.#free = I[o + NEXT]!
    I.fill(0, o, o + INTS)
    I[o + HI] = hi
    I[o + LO] = lo
    I[o + META] = USED
    this.#indexPut(s)
    this.#append(s)
    this.#size++
    this.floatsOf(s)[this.floatAt(s) + USED_AT] = this.now
    return s
  }

  /** Gives a slot back (its content must have been released). */
  free(s: number): void {
    this.#indexDelete(s)
    this.#unlink(s)
    const I = this.intsOf(s)
    const o = this.intAt(s)
    I[o + META] = 0
    I[o + NEXT] = this.#free
    this.#free = s
    this.#size--
  }

  /** marks a slot the most recently used */
  touch(s: number): void {
    this.floatsOf(s)[this.floatAt(s) + USED_AT] = this.now
    if (s === this.#tail) return
    this.#unlink(s)
    this.#append(s)
  }

  /** when slot `s` was last used (processing time, see USED_AT) */
  usedAt(s: number): number {
    return this.floatsOf(s)[this.floatAt(s) + USED_AT]
  }

  memoryBytes(): number {
    let n = this.#floats.length * PAGE_SLOTS * (8 * FLOATS + 4 * INTS)
    for (const sub of this.#index) n += sub.byteLength
    return n
  }

  #setLink(s: number, field: number, to: number): void {
    this.#ints[s >>> PAGE_BITS][(s & PAGE_MASK) * INTS + field] = to
  }

  #link(s: number, field: number): number {
    return this.#ints[s >>> PAGE_BITS][(s & PAGE_MASK) * INTS + field]
  }

  #append(s: number): void {
    this.#setLink(s, PREV, this.#tail)
    this.#setLink(s, NEXT, NONE)
    if (this.#tail === NONE) this.#head = s
    else this.#setLink(this.#tail, NEXT, s)
    this.#tail = s
  }

  #unlink(s: number): void {
    const prev = this.#link(s, PREV)
    const next = this.#link(s, NEXT)
    if (prev === NONE) this.#head = next
    else this.#setLink(prev, NEXT, next)
    if (next === NONE) this.#tail = prev
    else this.#setLink(next, PREV, prev)
  }

  #hashOf(s: number): number {
    return mix(this.#link(s, HI), this.#link(s, LO))
  }

  #indexPut(s: number): void {
    const h = this.#hashOf(s)
    const sub = h >>> (32 - SUB_BITS)
    if (2 * (this.#indexUsed[sub] + 1) > this.#index[sub].length) this.#growSub(sub)
    place(this.#index[sub], h, s)
    this.#indexUsed[sub]++
  }

  /** Linear probing's backward-shift deletion: no tombstones, so probes stay short. */
  #indexDelete(s: number): void {
    const h = this.#hashOf(s)
    const sub = h >>> (32 - SUB_BITS)
    const index = this.#index[sub]
    const mask = index.length - 1
    let hole = h & mask
    while (index[hole] !== s + 1) hole = (hole + 1) & mask
    for (let p = (hole + 1) & mask; index[p] !== 0; p = (p + 1) & mask) {
      const home = this.#hashOf(index[p] - 1) & mask
      // the entry at p may move back into the hole unless its home lies after the hole, up to p
      if (((p - home) & mask) >= ((p - hole) & mask)) {
        index[hole] = index[p]!
        hole = p
      }
    }
    index[hole] = 0
    this.#indexUsed[sub]--
  }

  #growSub(sub: number): void {
    const old = this.#index[sub]
    const index = new Int32Array(2 * old.length)
    for (const v of old) if (v !== 0) place(index, this.#hashOf(v - 1), v - 1)
    this.#index[sub] = index
  }

  #addPage(): void {
    const first = this.#floats.length * PAGE_SLOTS
    this.#floats.push(new Float64Array(PAGE_SLOTS * FLOATS))
    const I = new Int32Array(PAGE_SLOTS * INTS)
    this.#ints.push(I)
    for (let k = PAGE_SLOTS - 1; k >= 0; k--) {
      I[k * INTS + NEXT] = this.#free
      this.#free = first + k
    }
  }
}

/** puts slot `s` with hash `h` in the first empty place of its probe sequence */
function place(index: Int32Array, h: number, s: number): void {
  const mask = index.length - 1
  let p = h & mask
  while (index[p] !== 0) p = (p + 1) & mask
  index[p] = s + 1
}

/**
 * Hashes are uniform already, but mixing both halves keeps the index sound for keys that are not
 * (tests, or halves whose low bits already chose the partition).
 */
function mix(hi: number, lo: number): number {
  const h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1)
  return h ^ (h >>> 16)
}
