import { HLL_M, hllAdd, hllEstimate, hllMaxInto } from './hll.js'
import { U64Map } from './u64-map.js'

/**
 * Distinct count of 64-bit session hashes: an exact set while it holds at most `threshold` hashes,
 * then a dense HyperLogLog (p = 14, ≈0.81 % standard error; see hll.ts). Every update is a join
 * (set union / register max), so replaying an event changes nothing.
 *
 * @example
 * const c = new SessionCounter(1024)
 * c.add(h.hi, h.lo)
 * c.count() // 1
 */
export class SessionCounter {
  readonly threshold: number
  #exact: U64Map | undefined
  #registers: Uint8Array | undefined
  /** the HyperLogLog estimate is cached until a register changes */
  #estimate = -1
  #changes = 0

  /**
   * `threshold`: hashes held exactly before the sketch turns into a HyperLogLog (the service passes
   * GOALPOST_EXACT_THRESHOLD; there is no second default here to drift from it). Below it counts are
   * exact integers, which is what small sites look at most closely.
   */
  constructor(threshold: number) {
    if (!Number.isInteger(threshold) || threshold < 0) throw new RangeError(`exact threshold ${threshold} is not a non-negative integer`)
    this.threshold = threshold
    if (threshold > 0) this.#exact = new U64Map()
    else this.#registers = new Uint8Array(HLL_M)
  }

  /**
   * How many times the counter changed: an owner that keeps many counters (one per breakdown value)
   * finds those changed since it last wrote them without a dirty mark per update.
   */
  get changes(): number {
    return this.#changes
  }

  get isExact(): boolean {
    return this.#exact !== undefined
  }

  add(hi: number, lo: number): boolean {
    const exact = this.#exact
    if (exact !== undefined) {
      if (!exact.setMin(hi, lo, 0)) return false
      if (exact.size > this.threshold) this.#toHll()
      this.#changes++
      return true
    }
    if (!hllAdd(this.#registers!, hi, lo)) return false
    this.#estimate = -1
    this.#changes++
    return true
  }

  /**
   * Takes a hash out while the counter is exact: true iff it was there. A HyperLogLog cannot forget
   * (false): past the threshold a count may keep a session that moved elsewhere.
   */
  remove(hi: number, lo: number): boolean {
    if (!(this.#exact?.delete(hi, lo) ?? false)) return false
    this.#changes++
    return true
  }

  /** Exact integer while exact, else the HyperLogLog estimate (rounded). */
  count(): number {
    if (this.#exact !== undefined) return this.#exact.size
    if (this.#estimate < 0) this.#estimate = Math.round(hllEstimate(this.#registers!))
    return this.#estimate
  }

  /** Union in place; the result is exact only while both are exact and it stays ≤ this threshold. */
  mergeFrom(other: SessionCounter): boolean {
    if (other === this) return false
    const theirs = other.#exact
    if (theirs !== undefined) {
      let changed = false
      theirs.forEach((hi, lo) => {
        if (this.add(hi, lo)) changed = true
      })
      return changed
    }
    const converted = this.#exact !== undefined
    if (converted) this.#toHll()
    const changed = hllMaxInto(this.#registers!, other.#registers!)
    if (changed) this.#estimate = -1
    if (changed || converted) this.#changes++
    return changed || converted
  }

  clone(): SessionCounter {
    const c = new SessionCounter(this.threshold)
    if (this.#exact !== undefined) {
      c.#exact = U64Map.fromEntries(this.#exact.entries())
      c.#registers = undefined
    } else {
      c.#exact = undefined
      c.#registers = new Uint8Array(this.#registers!)
      c.#estimate = this.#estimate
    }
    return c
  }

  memoryBytes(): number {
    return 48 + (this.#exact !== undefined ? this.#exact.memoryBytes() : HLL_M + 64)
  }

  /** Packs the exact set of a counter that has stopped changing (U64Map.pack); a HyperLogLog is left as it is. */
  pack(): void {
    this.#exact?.pack()
  }

  /** The exact hashes as [hi, lo, hi, lo, …] pairs, or undefined in HyperLogLog mode (for the encoder). */
  exactEntries(): Uint32Array | undefined {
    const exact = this.#exact
    if (exact === undefined) return undefined
    const out = new Uint32Array(exact.size * 2)
    let o = 0
    exact.forEach((hi, lo) => {
      out[o++] = hi
      out[o++] = lo
    })
    return out
  }

  /** Calls `fn` with every hash while exact; nothing in HyperLogLog mode. */
  forEachHash(fn: (hi: number, lo: number) => void): void {
    this.#exact?.forEach(fn)
  }

  /** The registers themselves, not a copy (for the encoder; do not write), or undefined while exact. */
  registers(): Uint8Array | undefined {
    return this.#registers
  }

  /** Rebuilds an exact counter from hashes as [hi, lo, …] pairs; turns into HLL if over the threshold. */
  static fromExact(pairs: Uint32Array, threshold: number): SessionCounter {
    const c = new SessionCounter(threshold)
    if (pairs.length % 2 !== 0) throw new RangeError('SessionCounter.fromExact: odd number of hash halves')
    for (let i = 0; i < pairs.length; i += 2) c.add(pairs[i], pairs[i + 1])
    return c
  }

  /** Rebuilds a HyperLogLog counter from its registers (copied). */
  static fromRegisters(registers: Uint8Array, threshold: number): SessionCounter {
    if (registers.length !== HLL_M) throw new RangeError(`expected ${HLL_M} registers, got ${registers.length}`)
    const c = new SessionCounter(threshold)
    c.#exact = undefined
    c.#registers = new Uint8Array(registers) // not slice(): on a Buffer that is a view
    return c
  }

  /**
   * Distinct count of the union, leaving the inputs untouched. Exact when every input is exact and
   * the union holds at most the largest of their thresholds; otherwise merged in one shared scratch
   * register array, so merging 30 daily sketches allocates nothing per call.
   */
  static union(counters: readonly SessionCounter[]): number {
    if (counters.length === 0) return 0
    if (counters.length === 1) return counters[0].count()
    let threshold = 0
    let allExact = true
    for (const c of counters) {
      if (c.#exact === undefined) allExact = false
      if (c.threshold > threshold) threshold = c.threshold
    }
    if (allExact) {
      const n = SessionCounter.#exactUnion(counters, threshold)
      if (n >= 0) return n
    }
    const regs = scratchRegisters
    regs.fill(0)
    for (const c of counters) {
      if (c.#registers !== undefined) hllMaxInto(regs, c.#registers)
      else c.#exact!.forEach((hi, lo) => hllAdd(regs, hi, lo))
    }
    return Math.round(hllEstimate(regs))
  }

  /** Size of the union of exact counters, or −1 as soon as it exceeds `threshold`. */
  static #exactUnion(counters: readonly SessionCounter[], threshold: number): number {
    // A scratch set that once grew far past what is needed now would make clear() slow: start over.
    if (scratchSet.memoryBytes() > 64 * 1024 + 4 * 12 * threshold) scratchSet = new U64Map()
    scratchSet.clear()
    const set = scratchSet
    const overflows = (hi: number, lo: number): boolean => {
      set.setMin(hi, lo, 0)
      return set.size > threshold
    }
    for (const c of counters) if (c.#exact!.some(overflows)) return -1
    return set.size
  }

  #toHll(): void {
    const regs = new Uint8Array(HLL_M)
    this.#exact!.forEach((hi, lo) => hllAdd(regs, hi, lo))
    this.#exact = undefined
    this.#registers = regs
    this.#estimate = -1
  }
}

const scratchRegisters = new Uint8Array(HLL_M)
let scratchSet = new U64Map()

