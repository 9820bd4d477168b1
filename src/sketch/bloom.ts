/**
 * A Bloom filter over 64-bit hashes (given as two 32-bit halves): "certainly never added" or
 * "maybe added". With `bitsPerItem` 10 and 7 probes the false-positive rate stays near 1 % up to
 * `capacity` items. Probes come from double hashing of the two halves (Kirsch & Mitzenmacher), so
 * no further hashing happens per probe.
 */
export class BloomFilter {
  readonly capacity: number
  readonly #bits: Uint32Array
  readonly #mask: number
  readonly #probes: number
  #count = 0

  constructor(capacity: number, bitsPerItem = 10, probes = 7) {
    const wanted = Math.max(1024, capacity * bitsPerItem)
    const bits = 2 ** Math.ceil(Math.log2(wanted))
    this.capacity = capacity
    this.#bits = new Uint32Array(bits / 32)
    this.#mask = bits - 1
    this.#probes = probes
  }

  /** items added (a repeat counts again): past `capacity` the false-positive rate climbs */
  get count(): number {
    return this.#count
  }

  memoryBytes(): number {
    return this.#bits.byteLength
  }

  add(hi: number, lo: number): void {
    const step = (hi | 1) >>> 0
    let h = lo >>> 0
    for (let i = 0; i < this.#probes; i++) {
      const bit = h & this.#mask
      this.#bits[bit >>> 5] |= 1 << (bit & 31)
      h = (h + step) >>> 0
    }
    this.#count++
  }

  has(hi: number, lo: number): boolean {
    const step = (hi | 1) >>> 0
    let h = lo >>> 0
    for (let i = 0; i < this.#probes; i++) {
      const bit = h & this.#mask
      if ((this.#bits[bit >>> 5] & (1 << (bit & 31))) === 0) return false
      h = (h + step) >>> 0
    }
    return true
  }
}
