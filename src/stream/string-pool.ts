/** kinds of values with a cache of their own (see `#last`) */
export const CHANNELS = 7

/**
 * Strings that many hot sessions share (site ids, pages, referrers, user agents, event names),
 * each held once and named by a small integer id, with a count of the references to it: a string
 * no session refers to any more is forgotten, so a pool holds only what live sessions use, however
 * many distinct values went by. Id 0 stands for null.
 */
export class StringPool {
  readonly #ids = new Map<string, number>()
  #strings: (string | null)[] = [null]
  #refs = new Int32Array(64)
  readonly #free: number[] = []
  #chars = 0
  /**
   * Per channel (a kind of value: sites, pages…), the string last asked for and its id. One event
   * asks for its page up to three times (entry, exit, seen) and consecutive events often share a
   * site, so this spares a Map lookup, and the hashing of a fresh string, more often than not.
   */
  readonly #last: (string | null)[] = new Array<string | null>(CHANNELS).fill(null)
  readonly #lastId = new Int32Array(CHANNELS)

  /** distinct strings held */
  get size(): number {
    return this.#ids.size
  }

  /** The id of `s`, one more reference to it; `channel` names the kind of value, for the cache. */
  acquire(s: string, channel = 0): number {
    let id = s === this.#last[channel] ? this.#lastId[channel] : this.#ids.get(s)
    if (id === undefined) {
      id = this.#free.pop() ?? this.#strings.length
      if (id === this.#strings.length) this.#strings.push(s)
      else this.#strings[id] = s
      if (id >= this.#refs.length) {
        const refs = new Int32Array(2 * this.#refs.length)
        refs.set(this.#refs)
        this.#refs = refs
      }
      this.#ids.set(s, id)
      this.#chars += s.length
    }
    this.#refs[id]++
    this.#last[channel] = s
    this.#lastId[channel] = id
    return id
  }

  /** one more reference to an id already held (0 is ignored) */
  retain(id: number): void {
    if (id !== 0) this.#refs[id]++
  }

  /** The id of `s` if it is held, else 0; takes no reference. */
  find(s: string, channel = 0): number {
    if (s === this.#last[channel]) return this.#lastId[channel]
    return this.#ids.get(s) ?? 0
  }

  /** Drops one reference (0 is ignored); the last one forgets the string. */
  release(id: number): void {
    if (id === 0) return
    if (--this.#refs[id] > 0) return
    const s = this.#strings[id]!
    for (let c = 0; c < CHANNELS; c++) if (this.#lastId[c] === id) this.#last[c] = null
    this.#ids.delete(s)
    this.#chars -= s.length
    this.#strings[id] = null
    this.#free.push(id)
  }

  get(id: number): string | null {
    return this.#strings[id]!
  }

  /** references held to an id (for tests and checks) */
  refs(id: number): number {
    return this.#refs[id] ?? 0
  }

  /** rough bytes held: the strings (one byte a character, as V8 holds ASCII) and their map entries */
  memoryBytes(): number {
    return this.#chars + this.#ids.size * 80 + this.#refs.byteLength + this.#strings.length * 8
  }

  clear(): void {
    this.#ids.clear()
    this.#strings = [null]
    this.#refs.fill(0)
    this.#free.length = 0
    this.#chars = 0
    this.#last.fill(null)
  }
}
