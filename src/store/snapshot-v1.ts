/**
 * Snapshot encodings, version 1, of the in-memory state (sketch/ and goals/). Each value stored in
 * LevelDB is one of the records below; the key says which goal/site/day it belongs to.
 *
 *   record      = version:u8 (=1) kind:u8 body       (integers little-endian; record-v1.ts)
 *
 *   kind 1  session counter (one site × day)
 *     body      = threshold:u32 mode:u8 (exact | hll)
 *     exact     = mode=0 n:u32 n × (hi:u32 lo:u32)                 the session hashes
 *     hll       = mode=1 p:u8 (=14) 2^p × register:u8
 *
 *   kind 2  goal day (one goal × day: converted sessions and their first completion time)
 *     body      = n:u32 n × (hi:u32 lo:u32 time:u32)
 *                 time = ms after day × 86 400 000 − 14 h (see goals/goal-days.ts)
 *
 *   kind 3  multi-day side index (one goal: sessions that converted on several days, or on one
 *           day of it and other goals' other days)
 *     body      = n:u32 n × (hi:u32 lo:u32 k:u16 k × day:i32)      days ascending, k ≥ 1
 *     Entries with k = 1 came with overlap and funnels by days; a build before them dropped such
 *     entries as it read them, which was harmless to its answers (it never needed them).
 *
 *   kind 4  top-k (one site: paths or event names with approximate session counts)
 *     body      = capacity:u32 n:u32 n × (count:f64 error:f64 lastDay:i32 len:u32 len × utf8:u8)
 *
 *   kind 5  session summary: summary-v1.ts
 *
 *   kind 6  revenue day (one goal × day: the revenue events of matching events; goals/revenue-days.ts)
 *     body      = n:u32 n × (len:u16 len × key:utf8 other:u8 amountHi:u32 amountLo:u32)
 *                 key = the event's identity; other = 1 for another currency (amount 0),
 *                 else amount = amountHi × 2^32 + amountLo in 1/10 000 units (< 10^16)
 *     Added after the other kinds: a build that predates it has no such keys (r!) to read.
 */
import { GoalDays, type MultiDayEntry } from '../goals/index.js'
import { HLL_M, HLL_P, SessionCounter, TopK, U64Map } from '../sketch/index.js'
import { KIND_COUNTER, KIND_GOAL_DAY, KIND_MULTI_DAY, KIND_REVENUE_DAY, KIND_TOP_K, Reader, Writer } from './record-v1.js'
import { OTHER } from '../goals/index.js'

export { SNAPSHOT_VERSION } from './record-v1.js'

const MODE_EXACT = 0
const MODE_HLL = 1

export function encodeSessionCounter(c: SessionCounter): Uint8Array {
  const pairs = c.exactEntries()
  if (pairs !== undefined) {
    const w = new Writer(KIND_COUNTER, 4 + 1 + 4 + 4 * pairs.length)
    w.u32(c.threshold)
    w.u8(MODE_EXACT)
    w.u32(pairs.length / 2)
    w.u32s(pairs)
    return w.done()
  }
  const w = new Writer(KIND_COUNTER, 4 + 1 + 1 + HLL_M)
  w.u32(c.threshold)
  w.u8(MODE_HLL)
  w.u8(HLL_P)
  w.bytes(c.registers()!)
  return w.done()
}

export function decodeSessionCounter(buf: Uint8Array): SessionCounter {
  const r = new Reader(buf, KIND_COUNTER)
  const threshold = r.u32()
  const mode = r.u8()
  let c: SessionCounter
  if (mode === MODE_EXACT) {
    const n = r.u32()
    c = SessionCounter.fromExact(r.u32s(2 * n), threshold)
  } else if (mode === MODE_HLL) {
    const p = r.u8()
    if (p !== HLL_P) throw new Error(`snapshot-v1 session counter: HyperLogLog precision ${p} is not supported (expected ${HLL_P})`)
    c = SessionCounter.fromRegisters(r.bytes(HLL_M), threshold)
  } else {
    throw new Error(`snapshot-v1 session counter: unknown mode ${mode}`)
  }
  r.end()
  return c
}

/** One goal × day bucket: session hash → first completion time (relative, as GoalDays holds it). */
export function encodeGoalDay(map: U64Map): Uint8Array {
  return goalDayRecord(map.entries())
}

/** the goal-day record of entries packed as U64Map.entries() packs them */
function goalDayRecord(packed: Uint32Array): Uint8Array {
  const w = new Writer(KIND_GOAL_DAY, 4 + 4 * packed.length)
  w.u32(packed.length / 3)
  w.u32s(packed)
  return w.done()
}

/**
 * Encodes a goal day a slice at a time, so a snapshot can let the event loop turn between slices:
 * a busy goal's day (a million converted sessions and more) took ~100 ms in one piece. Works on a
 * copy of the map taken when it starts, so the fold may go on changing the map meanwhile. The
 * record is the one encodeGoalDay writes.
 */
export class GoalDayEncoder {
  readonly #map: U64Map
  readonly #packed: Uint32Array
  #o = 0
  #slot = 0

  constructor(map: U64Map) {
    this.#map = map.clone()
    this.#packed = new Uint32Array(this.#map.size * 3)
  }

  /** entries in the record */
  get size(): number {
    return this.#map.size
  }

  /** Packs up to `slots` more table slots; true once every slot is packed. */
  step(slots: number): boolean {
    const to = this.#slot + slots
    this.#o = this.#map.entriesInto(this.#packed, this.#o, this.#slot, to)
    this.#slot = to
    return to >= this.#map.slots
  }

  done(): Uint8Array {
    if (this.#slot < this.#map.slots) throw new Error('GoalDayEncoder.done before every slot was packed')
    return goalDayRecord(this.#packed)
  }
}

export function decodeGoalDay(buf: Uint8Array): U64Map {
  const r = new Reader(buf, KIND_GOAL_DAY)
  const n = r.u32()
  const map = U64Map.fromEntries(r.u32s(3 * n))
  r.end()
  return map
}

export function encodeMultiDay(source: GoalDays | readonly MultiDayEntry[]): Uint8Array {
  const entries = source instanceof GoalDays ? source.multiDayEntries() : source
  let size = 4
  for (const e of entries) size += 4 + 4 + 2 + 4 * e.days.length
  const w = new Writer(KIND_MULTI_DAY, size)
  w.u32(entries.length)
  for (const e of entries) {
    if (e.days.length > 0xffff) throw new RangeError('snapshot-v1 multi-day index: more than 65535 days for one session')
    w.u32(e.hi)
    w.u32(e.lo)
    w.u16(e.days.length)
    for (const d of e.days) w.i32(d)
  }
  return w.done()
}

export function decodeMultiDay(buf: Uint8Array): MultiDayEntry[] {
  const r = new Reader(buf, KIND_MULTI_DAY)
  const n = r.u32()
  const entries: MultiDayEntry[] = []
  for (let i = 0; i < n; i++) {
    const hi = r.u32()
    const lo = r.u32()
    const k = r.u16()
    const days: number[] = []
    for (let j = 0; j < k; j++) days.push(r.i32())
    entries.push({ hi, lo, days })
  }
  r.end()
  return entries
}

const utf8 = new TextEncoder()

export function encodeTopK(t: TopK): Uint8Array {
  const entries = t.entries()
  const values = entries.map((e) => utf8.encode(e.value))
  let size = 8
  for (const v of values) size += 8 + 8 + 4 + 4 + v.length
  const w = new Writer(KIND_TOP_K, size)
  w.u32(t.capacity)
  w.u32(entries.length)
  entries.forEach((e, i) => {
    w.f64(e.count)
    w.f64(e.error)
    w.i32(e.lastDay)
    w.u32(values[i].length)
    w.bytes(values[i])
  })
  return w.done()
}

export function decodeTopK(buf: Uint8Array): TopK {
  const r = new Reader(buf, KIND_TOP_K)
  const capacity = r.u32()
  const n = r.u32()
  const entries = []
  for (let i = 0; i < n; i++) {
    const count = r.f64()
    const error = r.f64()
    const lastDay = r.i32()
    const value = r.utf8(r.u32())
    entries.push({ value, count, error, lastDay })
  }
  r.end()
  return TopK.fromEntries(capacity, entries)
}

const U32 = 0x1_0000_0000n

export function encodeRevenueDay(entries: readonly (readonly [string, bigint])[]): Uint8Array {
  const keys = entries.map(([k]) => utf8.encode(k))
  let size = 4
  for (const k of keys) size += 2 + k.length + 1 + 8
  const w = new Writer(KIND_REVENUE_DAY, size)
  w.u32(entries.length)
  entries.forEach(([, amount], i) => {
    if (keys[i].length > 0xffff) throw new RangeError('snapshot-v1 revenue day: a key over 65535 bytes')
    w.u16(keys[i].length)
    w.bytes(keys[i])
    const other = amount === OTHER
    const units = other ? 0n : amount
    w.u8(other ? 1 : 0)
    w.u32(Number(units / U32))
    w.u32(Number(units % U32))
  })
  return w.done()
}

export function decodeRevenueDay(buf: Uint8Array): [string, bigint][] {
  const r = new Reader(buf, KIND_REVENUE_DAY)
  const n = r.u32()
  const out: [string, bigint][] = []
  for (let i = 0; i < n; i++) {
    const key = r.utf8(r.u16())
    const other = r.u8()
    const hi = r.u32()
    const lo = r.u32()
    out.push([key, other === 1 ? OTHER : BigInt(hi) * U32 + BigInt(lo)])
  }
  r.end()
  return out
}
