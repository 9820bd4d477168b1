/**
 * Heavy hitters with bounded memory: the Space-Saving algorithm (Metwally, Agrawal, El Abbadi,
 * "Efficient computation of frequent and top-k elements in data streams", 2005). When full, a new
 * value replaces the smallest counter and inherits its count, so counts are over-estimates by at
 * most `error`, and any value with a true count above total / capacity is guaranteed to be kept.
 * The smallest counter is found through a min-heap of entry indices (O(log capacity) per add).
 */
export const DEFAULT_TOP_K_CAPACITY = 1000

export interface TopKEntry {
  value: string
  count: number
  /** how much of `count` may come from evicted values */
  error: number
  lastDay: number
}

export interface TopKQuery {
  /** keep values starting with it */
  prefix?: string
  /** keep values seen on this day or later */
  minDay?: number
}

export class TopK {
  readonly capacity: number
  readonly #index = new Map<string, number>()
  readonly #values: string[] = []
  readonly #counts: Float64Array
  readonly #errors: Float64Array
  readonly #lastDays: Int32Array
  /** heap of entry indices, smallest count first */
  readonly #heap: Int32Array
  /** where each entry sits in the heap */
  readonly #heapPos: Int32Array

  constructor(capacity = DEFAULT_TOP_K_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`top-k capacity ${capacity} is not a positive integer`)
    this.capacity = capacity
    this.#counts = new Float64Array(capacity)
    this.#errors = new Float64Array(capacity)
    this.#lastDays = new Int32Array(capacity)
    this.#heap = new Int32Array(capacity)
    this.#heapPos = new Int32Array(capacity)
  }

  get size(): number {
    return this.#values.length
  }

  add(value: string, weight = 1, day = 0): void {
    let e = this.#index.get(value)
    if (e !== undefined) {
      this.#counts[e] += weight
      if (day > this.#lastDays[e]) this.#lastDays[e] = day
      this.#siftDown(this.#heapPos[e])
      return
    }
    if (this.#values.length < this.capacity) {
      e = this.#values.length
      this.#values.push(value)
      this.#counts[e] = weight
      this.#errors[e] = 0
      this.#lastDays[e] = day
      this.#heap[e] = e
      this.#heapPos[e] = e
      this.#index.set(value, e)
      this.#siftUp(e)
      return
    }
    e = this.#heap[0]
    this.#index.delete(this.#values[e])
    this.#values[e] = value
    this.#index.set(value, e)
    this.#errors[e] = this.#counts[e]
    this.#counts[e] += weight
    this.#lastDays[e] = day
    this.#siftDown(0)
  }

  /** The `n` largest counts, by count descending then value ascending. */
  top(n: number, query: TopKQuery = {}): { value: string; count: number }[] {
    const prefix = query.prefix ?? ''
    const minDay = query.minDay ?? -Infinity
    const picked: number[] = []
    for (let e = 0; e < this.#values.length; e++) {
      if (this.#lastDays[e] >= minDay && this.#values[e].startsWith(prefix)) picked.push(e)
    }
    const counts = this.#counts
    const values = this.#values
    picked.sort((a, b) => counts[b] - counts[a] || (values[a] < values[b] ? -1 : 1))
    const out: { value: string; count: number }[] = []
    for (let i = 0; i < picked.length && i < n; i++) out.push({ value: values[picked[i]], count: counts[picked[i]] })
    return out
  }

  /** Every entry, in no particular order (for the snapshot encoder). */
  entries(): TopKEntry[] {
    return this.#values.map((value, e) => ({
      value,
      count: this.#counts[e],
      error: this.#errors[e],
      lastDay: this.#lastDays[e],
    }))
  }

  static fromEntries(capacity: number, entries: readonly TopKEntry[]): TopK {
    if (entries.length > capacity) throw new RangeError(`${entries.length} top-k entries exceed capacity ${capacity}`)
    const t = new TopK(capacity)
    for (const { value, count, error, lastDay } of entries) {
      if (t.#index.has(value)) throw new RangeError(`duplicate top-k value ${JSON.stringify(value)}`)
      const e = t.#values.length
      t.#values.push(value)
      t.#index.set(value, e)
      t.#counts[e] = count
      t.#errors[e] = error
      t.#lastDays[e] = lastDay
      t.#heap[e] = e
      t.#heapPos[e] = e
      t.#siftUp(e)
    }
    return t
  }

  memoryBytes(): number {
    let strings = 0
    for (const v of this.#values) strings += 32 + 2 * v.length
    return 128 + this.capacity * (8 + 8 + 4 + 4 + 4 + 8) + this.#values.length * 40 + strings
  }

  #less(a: number, b: number): boolean {
    return this.#counts[this.#heap[a]] < this.#counts[this.#heap[b]]
  }

  #swap(a: number, b: number): void {
    const h = this.#heap
    const ea = h[a]
    const eb = h[b]
    h[a] = eb
    h[b] = ea
    this.#heapPos[eb] = a
    this.#heapPos[ea] = b
  }

  #siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.#less(i, parent)) return
      this.#swap(i, parent)
      i = parent
    }
  }

  #siftDown(i: number): void {
    const n = this.#values.length
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) return
      const r = l + 1
      const child = r < n && this.#less(r, l) ? r : l
      if (!this.#less(child, i)) return
      this.#swap(i, child)
      i = child
    }
  }
}
