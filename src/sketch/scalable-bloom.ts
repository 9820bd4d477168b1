import { BloomFilter } from './bloom.js'

/** each layer holds twice the items of the one before */
const GROWTH = 2
/**
 * Bits per item of the first layer (≈ 0.05 % false positives) and what each later layer adds.
 * Not the textbook 10 bits (1 %): a fold takes ~150 new sessions at a time under load, and at 1 %
 * nearly every fold read the store for a session it could not have; that read's native call held
 * the event loop for 40–55 ms at times under saturation (LevelDB takes its lock to start a read),
 * and 0.9 s in total over 4 minutes. A session costs 2 bytes here.
 */
const FIRST_BITS = 16
const MORE_BITS = 2

/**
 * A Bloom filter that grows without its items: when the newest layer is full, a layer twice its
 * size is added, with more bits per item, so the summed false-positive rate stays bounded (under
 * 0.1 % over any number of layers) — Almeida et al., "Scalable Bloom Filters", 2007. A plain filter
 * has to be rebuilt from its items to grow, and the session filter's items are the store's keys:
 * a rebuild scanned them all and stalled folding for 200 ms at 500 k sessions.
 *
 * @example
 * const f = new ScalableBloomFilter(1 << 17)
 * f.add(hi, lo)
 * f.has(hi, lo) // true; for an item never added, false but for < 0.1 % of them
 */
export class ScalableBloomFilter {
  readonly #layers: BloomFilter[] = []
  #newest: BloomFilter

  constructor(initialCapacity: number) {
    this.#newest = new BloomFilter(Math.max(1, initialCapacity), FIRST_BITS, probesFor(FIRST_BITS))
    this.#layers.push(this.#newest)
  }

  /** items added over all layers (a repeat counts again) */
  get count(): number {
    let n = 0
    for (const layer of this.#layers) n += layer.count
    return n
  }

  get layers(): number {
    return this.#layers.length
  }

  add(hi: number, lo: number): void {
    if (this.#newest.count >= this.#newest.capacity) {
      const bits = FIRST_BITS + MORE_BITS * this.#layers.length
      this.#newest = new BloomFilter(this.#newest.capacity * GROWTH, bits, probesFor(bits))
      this.#layers.push(this.#newest)
    }
    this.#newest.add(hi, lo)
  }

  has(hi: number, lo: number): boolean {
    // newest first: it is the largest, so most items that were added are found there
    for (let i = this.#layers.length - 1; i >= 0; i--) if (this.#layers[i]!.has(hi, lo)) return true
    return false
  }
}

/** the probe count that minimizes false positives for a number of bits per item: k = b ln 2 */
const probesFor = (bitsPerItem: number): number => Math.max(1, Math.round(bitsPerItem * Math.LN2))
