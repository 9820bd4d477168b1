import { HLL_M, HLL_P, HLL_RANKS, histogramEstimate, hllRank, wordMax } from './hll.js'
import type { SessionCounter } from './session-counter.js'

const INDEX_SHIFT = 32 - HLL_P

/**
 * A HyperLogLog union that counters are merged into again and again — a window's past days
 * united once, then today's counters each time the window is asked — with a histogram of its
 * register values kept as registers rise, so its estimate reads 52 bins where hllEstimate reads
 * 16 384 registers. Merging only raises registers: a hash a counter dropped since an earlier merge
 * stays counted (as in any HyperLogLog union).
 *
 * @example
 * const u = new RunningUnion()
 * u.merge(pastDays)
 * u.merge(today) // again after today grew
 * u.estimate()
 */
export class RunningUnion {
  readonly #registers = new Uint8Array(HLL_M)
  readonly #histogram = new Float64Array(HLL_RANKS)
  /** per counter merged, its `changes` then: a counter unchanged since adds nothing new */
  readonly #merged = new WeakMap<SessionCounter, number>()

  constructor() {
    this.#histogram[0] = HLL_M
  }

  add(hi: number, lo: number): void {
    const i = hi >>> INDEX_SHIFT
    const r = hllRank(hi, lo)
    const was = this.#registers[i]
    if (was >= r) return
    this.#histogram[was]--
    this.#histogram[r]++
    this.#registers[i] = r
  }

  merge(counter: SessionCounter): void {
    if (this.#merged.get(counter) === counter.changes) return
    this.#merged.set(counter, counter.changes)
    const src = counter.registers()
    if (src === undefined) {
      counter.forEachHash((hi, lo) => this.add(hi, lo))
      return
    }
    // four registers per step (as hllMaxInto), bytes only where a word rose
    const a = new Uint32Array(this.#registers.buffer, 0, HLL_M / 4)
    const b = new Uint32Array(src.buffer, src.byteOffset, HLL_M / 4)
    const regs = this.#registers
    const h = this.#histogram
    for (let w = 0; w < a.length; w++) {
      if (wordMax(a[w], b[w]) === a[w]) continue
      for (let k = 4 * w; k < 4 * w + 4; k++) {
        const r = src[k]
        const was = regs[k]
        if (r > was) {
          h[was]--
          h[r]++
          regs[k] = r
        }
      }
    }
  }

  estimate(): number {
    return histogramEstimate(this.#histogram)
  }
}
