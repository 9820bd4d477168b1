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
  /** when each layer was opened (the clock's time): a layer takes no more items once the next opens */
  readonly #openedAt: number[] = []
  readonly #initial: number
  readonly #clock: () => number
  readonly #maxLayerAge: number
  #newest!: BloomFilter

  /**
   * `maxLayerAge` (in the clock's units) closes the newest layer at the next `retire` once it is
   * that old, full or not, so that layers can retire on time and the filter of a steady population
   * stops growing.
   */
  constructor(initialCapacity: number, opts: { clock?: () => number; maxLayerAge?: number } = {}) {
    this.#initial = Math.max(1, initialCapacity)
    this.#clock = opts.clock ?? Date.now
    this.#maxLayerAge = opts.maxLayerAge ?? Infinity
    this.#open(this.#initial)
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
    if (this.#newest.count >= this.#newest.capacity) this.#open(this.#newest.capacity * GROWTH)
    this.#newest.add(hi, lo)
  }

  /**
   * Drops the layers that took their last item before `cutoff` (every layer but the newest closes
   * when the next one opens), and closes the newest if it is older than the layer age: the owner
   * re-adds, to the newest layer, every item it still needs, so what a retired layer alone held is
   * what may be forgotten. Returns how many layers were dropped.
   */
  retire(cutoff: number): number {
    let n = 0
    while (this.#layers.length > 1 && this.#openedAt[1] < cutoff) {
      this.#layers.shift()
      this.#openedAt.shift()
      n++
    }
    // sized for twice what the closing layer took in its time
    if (this.#clock() - this.#openedAt[this.#openedAt.length - 1] >= this.#maxLayerAge && this.#newest.count > 0) {
      this.#open(this.#newest.count * GROWTH)
    }
    return n
  }

  memoryBytes(): number {
    let n = 0
    for (const layer of this.#layers) n += layer.memoryBytes()
    return n
  }

  #open(capacity: number): void {
    const bits = FIRST_BITS + MORE_BITS * this.#layers.length
    this.#newest = new BloomFilter(Math.max(this.#initial, capacity), bits, probesFor(bits))
    this.#layers.push(this.#newest)
    this.#openedAt.push(this.#clock())
  }

  has(hi: number, lo: number): boolean {
    // newest first: it is the largest, so most items that were added are found there
    for (let i = this.#layers.length - 1; i >= 0; i--) if (this.#layers[i].has(hi, lo)) return true
    return false
  }
}

/** the probe count that minimizes false positives for a number of bits per item: k = b ln 2 */
const probesFor = (bitsPerItem: number): number => Math.max(1, Math.round(bitsPerItem * Math.LN2))
