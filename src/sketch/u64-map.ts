/**
 * Open-addressing hash map from a 64-bit key (two 32-bit halves) to a uint32 value. A half may be
 * given as a uint32 or as the int32 of the same bits (the fold passes int32: small integers, which
 * V8 passes without making a number object); entries read back give uint32.
 *
 * Why not a JS Map: a Map keyed by a 16-char string costs ~100 bytes per entry plus the string;
 * here an entry is one 12-byte slot ([hi, lo, value] interleaved so that a probe touches one cache
 * line) at a load between 0.35 and 0.7, i.e. 17–34 bytes per entry.
 *
 * Empty slots hold the key (0, 0); the real key (0, 0) lives outside the table in its own field.
 * Linear probing; deletion shifts later entries back (no tombstones), which only the breakdown's
 * session counters need: a session whose earliest event arrives late moves to another value.
 *
 * A key's home slot is the top bits of its hash, so slots are in hash order whatever the capacity:
 * the keys of one part of the hash space (`hashPart`) lie in one run of slots in every map. A
 * query that joins many maps can then take them a part at a time, each part small enough to stay
 * in cache, and every key of a part is seen in the same step (`partInto`).
 *
 * A map that has stopped changing (a past day's sessions) can be packed (`pack`): its entries
 * side by side, grouped by the leading bits of their hash behind a directory of where each group
 * starts — ~13 bytes per entry instead of 17–34, and a part is one contiguous run with no empty
 * slots to skip. Reads work alike in both forms, as does lowering a held key's value; any other
 * write unpacks the map first.
 */
const MAX_LOAD = 0.7
const MIN_CAPACITY = 8
const STRIDE = 3
/** entries per group of a packed map, on average: a lookup compares about this many keys */
const PACKED_GROUP = 4
const NONE = new Uint32Array(0)

export class U64Map {
  #table: Uint32Array
  #mask: number
  /** 32 − log2(capacity): a key's home slot is its hash shifted right by this */
  #shift: number
  /** leading hash bits every key shares (`inPart`), skipped when homing keys */
  #skip = 0
  #growAt: number
  /** entries in the table, not counting the (0, 0) key */
  #used = 0
  #hasZero = false
  #zeroValue = 0
  /** when packed: the entries, [hi, lo, value] each, grouped by their hash's leading #groupBits */
  #packed: Uint32Array | null = null
  /** when packed: where each group starts, in entries (one more than the groups: the end) */
  #groups = NONE
  #groupBits = 0

  /**
   * `expected`: entries to make room for without growing. `inPart`: the keys will all lie in one
   * part of 2^inPart (`hashPart`); they share those leading bits, so the map homes them by the
   * bits after (homed by the shared ones, they would all pile into one run of slots).
   */
  constructor(expected = 0, inPart = 0) {
    this.#skip = inPart
    this.#table = NONE
    this.#mask = 0
    this.#shift = 0
    this.#growAt = 0
    this.#setTable(capacityFor(expected))
  }

  get size(): number {
    return this.#used + (this.#hasZero ? 1 : 0)
  }

  get(hi: number, lo: number): number | undefined {
    if (hi === 0 && lo === 0) return this.#hasZero ? this.#zeroValue : undefined
    if (this.#packed !== null) {
      const at = this.#locate(hi, lo)
      return at < 0 ? undefined : this.#packed[at + 2]
    }
    const i = this.#find(hi, lo)
    const t = this.#table
    return t[i] === 0 && t[i + 1] === 0 ? undefined : t[i + 2]
  }

  has(hi: number, lo: number): boolean {
    if (hi === 0 && lo === 0) return this.#hasZero
    if (this.#packed !== null) return this.#locate(hi, lo) >= 0
    const i = this.#find(hi, lo)
    return this.#table[i] !== 0 || this.#table[i + 1] !== 0
  }

  /** Inserts the key with `v`, or lowers its value to `v`. Returns true iff the map changed. */
  setMin(hi: number, lo: number, v: number): boolean {
    checkValue(v)
    if (hi === 0 && lo === 0) {
      if (this.#hasZero && this.#zeroValue <= v) return false
      this.#hasZero = true
      this.#zeroValue = v
      return true
    }
    if (this.#packed !== null) {
      const at = this.#locate(hi, lo)
      if (at >= 0) {
        if (this.#packed[at + 2] <= v) return false
        this.#packed[at + 2] = v
        return true
      }
      this.#unpack()
    }
    let i = this.#find(hi, lo)
    const t = this.#table
    if (t[i] !== 0 || t[i + 1] !== 0) {
      if (t[i + 2] <= v) return false
      t[i + 2] = v
      return true
    }
    if (this.#used >= this.#growAt) {
      this.#grow()
      i = this.#find(hi, lo)
    }
    this.#put(i, hi, lo, v)
    return true
  }

  /** Inserts or overwrites. Returns true iff the map changed. */
  set(hi: number, lo: number, v: number): boolean {
    checkValue(v)
    if (hi === 0 && lo === 0) {
      const changed = !this.#hasZero || this.#zeroValue !== v
      this.#hasZero = true
      this.#zeroValue = v
      return changed
    }
    if (this.#packed !== null) {
      const at = this.#locate(hi, lo)
      if (at >= 0) {
        if (this.#packed[at + 2] === v) return false
        this.#packed[at + 2] = v
        return true
      }
      this.#unpack()
    }
    let i = this.#find(hi, lo)
    const t = this.#table
    if (t[i] !== 0 || t[i + 1] !== 0) {
      if (t[i + 2] === v) return false
      t[i + 2] = v
      return true
    }
    if (this.#used >= this.#growAt) {
      this.#grow()
      i = this.#find(hi, lo)
    }
    this.#put(i, hi, lo, v)
    return true
  }

  /** Removes the key. Returns true iff it was there. */
  delete(hi: number, lo: number): boolean {
    if (hi === 0 && lo === 0) {
      const had = this.#hasZero
      this.#hasZero = false
      this.#zeroValue = 0
      return had
    }
    if (this.#packed !== null) {
      if (this.#locate(hi, lo) < 0) return false
      this.#unpack()
    }
    const t = this.#table
    const mask = this.#mask
    let hole = this.#find(hi, lo) / STRIDE
    if (t[hole * STRIDE] === 0 && t[hole * STRIDE + 1] === 0) return false
    for (let p = (hole + 1) & mask; ; p = (p + 1) & mask) {
      const i = p * STRIDE
      if (t[i] === 0 && t[i + 1] === 0) break
      const home = this.#home(t[i], t[i + 1])
      // the entry at p may move back into the hole unless its home lies after the hole, up to p
      if (((p - home) & mask) >= ((p - hole) & mask)) {
        const h = hole * STRIDE
        t[h] = t[i]
        t[h + 1] = t[i + 1]
        t[h + 2] = t[i + 2]
        hole = p
      }
    }
    const h = hole * STRIDE
    t[h] = t[h + 1] = t[h + 2] = 0
    this.#used--
    return true
  }

  forEach(fn: (hi: number, lo: number, v: number) => void): void {
    if (this.#hasZero) fn(0, 0, this.#zeroValue)
    const t = this.#packed ?? this.#table
    for (let i = 0; i < t.length; i += STRIDE) {
      if (t[i] !== 0 || t[i + 1] !== 0) fn(t[i], t[i + 1], t[i + 2])
    }
  }

  /** Visits entries until `fn` returns true; returns whether it did. */
  some(fn: (hi: number, lo: number, v: number) => boolean): boolean {
    if (this.#hasZero && fn(0, 0, this.#zeroValue)) return true
    const t = this.#packed ?? this.#table
    for (let i = 0; i < t.length; i += STRIDE) {
      if ((t[i] !== 0 || t[i + 1] !== 0) && fn(t[i], t[i + 1], t[i + 2])) return true
    }
    return false
  }

  clear(): void {
    if (this.#packed !== null) {
      this.#packed = null
      this.#groups = NONE
      this.#setTable(MIN_CAPACITY)
    }
    this.#table.fill(0)
    this.#used = 0
    this.#hasZero = false
    this.#zeroValue = 0
  }

  memoryBytes(): number {
    return this.#table.byteLength + (this.#packed?.byteLength ?? 0) + this.#groups.byteLength + 64
  }

  /** whether the map is packed (`pack`) */
  get packed(): boolean {
    return this.#packed !== null
  }

  /**
   * Packs the entries side by side, grouped by the leading bits of their hash (see the class
   * comment); two passes over the table. A map homed for one part (`inPart`) stays as it is.
   */
  pack(): void {
    if (this.#packed !== null || this.#skip !== 0) return
    const n = this.#used
    const bits = n <= PACKED_GROUP ? 0 : Math.ceil(Math.log2(n / PACKED_GROUP))
    const groups = new Uint32Array(2 ** bits + 1)
    const t = this.#table
    for (let i = 0; i < t.length; i += STRIDE) {
      if (t[i] !== 0 || t[i + 1] !== 0) groups[hashPart(t[i], t[i + 1], bits) + 1]++
    }
    for (let g = 1; g < groups.length; g++) groups[g] += groups[g - 1]
    const next = groups.slice(0, groups.length - 1)
    const packed = new Uint32Array(n * STRIDE)
    for (let i = 0; i < t.length; i += STRIDE) {
      if (t[i] === 0 && t[i + 1] === 0) continue
      const at = next[hashPart(t[i], t[i + 1], bits)]++ * STRIDE
      packed[at] = t[i]
      packed[at + 1] = t[i + 1]
      packed[at + 2] = t[i + 2]
    }
    this.#packed = packed
    this.#groups = groups
    this.#groupBits = bits
    this.#table = NONE
    this.#mask = 0
    this.#growAt = 0
  }

  /** Every entry packed as [hi, lo, value, hi, lo, value, …] (for the snapshot encoder). */
  entries(): Uint32Array {
    const out = new Uint32Array(this.size * STRIDE)
    this.entriesInto(out, 0, 0, this.slots)
    return out
  }

  /** table slots (a packed map's entries): `entriesInto` walks them in order */
  get slots(): number {
    return this.#packed !== null ? this.#used : this.#mask + 1
  }

  /**
   * Packs the entries of table slots [from, to) into `out` from index `o`, as `entries()` does
   * (the key (0, 0), kept outside the table, goes with slot 0); returns the index after the last.
   * One loop without a callback: a busy goal's day holds a million entries and more.
   */
  entriesInto(out: Uint32Array, o: number, from: number, to: number): number {
    if (from === 0 && this.#hasZero) {
      out[o + 2] = this.#zeroValue
      o += STRIDE
    }
    const t = this.#packed ?? this.#table
    const end = Math.min(to, this.slots) * STRIDE
    for (let i = from * STRIDE; i < end; i += STRIDE) {
      const hi = t[i]
      const lo = t[i + 1]
      if (hi !== 0 || lo !== 0) {
        out[o] = hi
        out[o + 1] = lo
        out[o + 2] = t[i + 2]
        o += STRIDE
      }
    }
    return o
  }

  /** A copy that later changes to this map do not reach: one memory copy of the table. */
  clone(): U64Map {
    const c = new U64Map()
    c.#table = this.#table.slice()
    c.#mask = this.#mask
    c.#shift = this.#shift
    c.#skip = this.#skip
    c.#growAt = this.#growAt
    c.#used = this.#used
    c.#hasZero = this.#hasZero
    c.#zeroValue = this.#zeroValue
    if (this.#packed !== null) {
      c.#packed = this.#packed.slice()
      // never written in place: unpacking drops it
      c.#groups = this.#groups
      c.#groupBits = this.#groupBits
    }
    return c
  }

  /**
   * Packs the entries whose keys lie in `part` of the hash space cut into 2^bits parts into `out`
   * as [hi, lo, value, tag] (`tag`: a word the caller wants beside each, such as the map's day).
   * Those are the run of slots of their homes, and past its end the entries pushed on by probing,
   * up to the first empty slot. Each entry is checked against the part, so maps smaller than 2^bits
   * slots work too. One loop without a callback: a join walks millions of entries.
   */
  partInto(part: number, bits: number, out: Words, tag: number): void {
    if (this.#skip !== 0) throw new Error('U64Map.partInto: the map holds one part already')
    if (part === 0 && this.#hasZero) out.push4(0, 0, this.#zeroValue, tag)
    if (this.#packed !== null) return this.#packedPartInto(part, bits, out, tag)
    const t = this.#table
    const mask = this.#mask
    const capacity = mask + 1
    if (bits === 0) {
      for (let i = 0; i < t.length; i += STRIDE) if (t[i] !== 0 || t[i + 1] !== 0) out.push4(t[i], t[i + 1], t[i + 2], tag)
      return
    }
    const start = Math.floor((part * capacity) / 2 ** bits)
    const end = Math.floor(((part + 1) * capacity) / 2 ** bits)
    // up to the first empty slot, entries may have been pushed here from the part before; past
    // it, every entry up to `end` has its home in the part
    let checking = true
    for (let i = start * STRIDE; i < end * STRIDE; i += STRIDE) {
      const hi = t[i]
      const lo = t[i + 1]
      if (hi === 0 && lo === 0) checking = false
      else if (!checking || hashPart(hi, lo, bits) === part) out.push4(hi, lo, t[i + 2], tag)
    }
    // past `end`, the run goes on with entries pushed on from homes in the part (or the next)
    for (let n = end; n < end + capacity; n++) {
      const i = (n & mask) * STRIDE
      const hi = t[i]
      const lo = t[i + 1]
      if (hi === 0 && lo === 0) return
      if (hashPart(hi, lo, bits) === part) out.push4(hi, lo, t[i + 2], tag)
    }
  }

  /** The inverse of `entries()`; a repeated key keeps its smallest value. */
  static fromEntries(packed: Uint32Array): U64Map {
    if (packed.length % STRIDE !== 0) throw new RangeError('U64Map.fromEntries: length is not a multiple of 3')
    const map = new U64Map(packed.length / STRIDE)
    for (let i = 0; i < packed.length; i += STRIDE) map.setMin(packed[i], packed[i + 1], packed[i + 2])
    return map
  }

  #packedPartInto(part: number, bits: number, out: Words, tag: number): void {
    const p = this.#packed!
    const gb = this.#groupBits
    if (bits <= gb) {
      // the part is whole groups: every entry in them is in it
      const end = this.#groups[(part + 1) << (gb - bits)] * STRIDE
      for (let i = this.#groups[part << (gb - bits)] * STRIDE; i < end; i += STRIDE) out.push4(p[i], p[i + 1], p[i + 2], tag)
      return
    }
    const g = part >>> (bits - gb)
    const end = this.#groups[g + 1] * STRIDE
    for (let i = this.#groups[g] * STRIDE; i < end; i += STRIDE) {
      if (hashPart(p[i], p[i + 1], bits) === part) out.push4(p[i], p[i + 1], p[i + 2], tag)
    }
  }

  /** a packed map's word index of the key, or -1 */
  #locate(hi: number, lo: number): number {
    hi |= 0
    lo |= 0
    const p = this.#packed!
    const g = hashPart(hi, lo, this.#groupBits)
    const end = this.#groups[g + 1] * STRIDE
    for (let i = this.#groups[g] * STRIDE; i < end; i += STRIDE) if ((p[i] | 0) === hi && (p[i + 1] | 0) === lo) return i
    return -1
  }

  /** Back to a table, room made for the entries held; groups come in home order, so this is quick. */
  #unpack(): void {
    const p = this.#packed!
    this.#packed = null
    this.#groups = NONE
    this.#setTable(capacityFor(this.#used))
    this.#used = 0
    for (let i = 0; i < p.length; i += STRIDE) this.#put(this.#find(p[i], p[i + 1]), p[i], p[i + 1], p[i + 2])
  }

  #setTable(capacity: number): void {
    this.#table = new Uint32Array(capacity * STRIDE)
    this.#mask = capacity - 1
    this.#shift = shiftFor(capacity)
    this.#growAt = Math.floor(capacity * MAX_LOAD)
  }

  /** the key's home slot: the top bits of its hash (after the bits a one-part map's keys share) */
  #home(hi: number, lo: number): number {
    return (mix(hi, lo) << this.#skip) >>> this.#shift
  }

  /** Index of the key's slot, or of the empty slot where it would go. */
  #find(hi: number, lo: number): number {
    hi |= 0
    lo |= 0
    const t = this.#table
    const mask = this.#mask
    let slot = this.#home(hi, lo)
    for (;;) {
      const i = slot * STRIDE
      const kh = t[i] | 0
      const kl = t[i + 1] | 0
      if ((kh === hi && kl === lo) || (kh === 0 && kl === 0)) return i
      slot = (slot + 1) & mask
    }
  }

  #put(i: number, hi: number, lo: number, v: number): void {
    const t = this.#table
    t[i] = hi
    t[i + 1] = lo
    t[i + 2] = v
    this.#used++
  }

  #grow(): void {
    const old = this.#table
    this.#setTable((this.#mask + 1) * 2)
    this.#used = 0
    for (let i = 0; i < old.length; i += STRIDE) {
      const hi = old[i]
      const lo = old[i + 1]
      if (hi !== 0 || lo !== 0) this.#put(this.#find(hi, lo), hi, lo, old[i + 2])
    }
  }
}

/**
 * Keys are usually hashes already, but mixing both halves keeps the map sound for keys that are
 * not (sequential ids, or hashes whose low bits were already used to pick a partition).
 */
function mix(hi: number, lo: number): number {
  const h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1)
  return h ^ (h >>> 16)
}

/** A growable run of uint32 words, four at a time: entries packed by `partInto`, reused from part to part. */
export class Words {
  data = new Uint32Array(1024)
  length = 0

  push4(a: number, b: number, c: number, d: number): void {
    let x = this.data
    const n = this.length
    if (n + 4 > x.length) {
      x = new Uint32Array(x.length * 2)
      x.set(this.data)
      this.data = x
    }
    x[n] = a
    x[n + 1] = b
    x[n + 2] = c
    x[n + 3] = d
    this.length = n + 4
  }
}

/** Which of 2^bits equal parts of the hash space the key falls in; every map agrees on it. */
export function hashPart(hi: number, lo: number, bits: number): number {
  return bits === 0 ? 0 : mix(hi, lo) >>> (32 - bits)
}

function shiftFor(capacity: number): number {
  return 32 - Math.log2(capacity)
}

function capacityFor(expected: number): number {
  let capacity = MIN_CAPACITY
  while (capacity * MAX_LOAD < expected) capacity *= 2
  return capacity
}

function checkValue(v: number): void {
  if (v >>> 0 !== v) throw new RangeError(`U64Map value ${v} is not a uint32`)
}
