import type { SyntheticStream } from './synthetic-stream.js'

/** A growable set of small non-negative integers with its size: session numbers are dense. */
class BitSet {
  #bits = new Uint8Array(1024)
  size = 0

  add(n: number): void {
    const byte = n >>> 3
    if (byte >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2))
      grown.set(this.#bits)
      this.#bits = grown
    }
    const bit = 1 << (n & 7)
    if ((this.#bits[byte] & bit) === 0) {
      this.#bits[byte] |= bit
      this.size++
    }
  }
}

/** What the service must count for one site. */
export interface SiteExpectation {
  siteId: string
  events: number
  sessions: number
  /** distinct converted sessions per goal, in the stream's goal order */
  conversions: number[]
}

/**
 * The events a service acknowledged, folded into what it must then report: distinct sessions per
 * site and distinct converted sessions per goal (docs/api.md §3).
 */
export class Tally {
  readonly #stream: SyntheticStream
  readonly #sessions: BitSet[]
  readonly #converted: BitSet[][]
  readonly #events: number[]

  constructor(stream: SyntheticStream) {
    this.#stream = stream
    const sites = stream.shape.siteIds.length
    this.#sessions = Array.from({ length: sites }, () => new BitSet())
    this.#converted = Array.from({ length: sites }, () => stream.shape.goals.map(() => new BitSet()))
    this.#events = new Array<number>(sites).fill(0)
  }

  /** events `first` … `first + n − 1` were acknowledged */
  add(first: number, n = 1): void {
    for (let seq = first; seq < first + n; seq++) {
      const s = this.#stream.slot(seq)
      this.#events[s.site]++
      this.#sessions[s.site].add(s.session)
      for (const g of this.#stream.completes(seq)) this.#converted[s.site][g].add(s.session)
    }
  }

  expected(): SiteExpectation[] {
    return this.#stream.shape.siteIds.map((siteId, i) => ({
      siteId,
      events: this.#events[i],
      sessions: this.#sessions[i].size,
      conversions: this.#converted[i].map((b) => b.size),
    }))
  }

  /** What events 0 … n − 1 of `stream` add up to: bounds for a generator that cannot say which it got answered. */
  static ofFirst(stream: SyntheticStream, n: number, eventsPerRequest = 1): SiteExpectation[] {
    const t = new Tally(stream)
    t.add(0, Math.max(0, n) * eventsPerRequest)
    return t.expected()
  }
}
