/**
 * The attributes of sessions out of memory, as their stored summaries hold them, kept for the
 * queries that read the same sessions again and again: a breakdown takes each session counted on
 * several days of its window off its value, and most of those sessions have left memory. An entry
 * is asked only for a session out of memory, where its summary cannot change; it is forgotten
 * whenever the session comes back into memory or leaves it (it may have changed in between), and
 * a read that such a passage overtook is not kept. Keyed by the session's hash halves, so a
 * breakdown's pass over tens of thousands of them builds no strings.
 */
import type { SessionSummary } from '../schema/index.js'
import { U64Map, hashKey } from '../sketch/index.js'
import { NO_VALUES, summaryAttributes } from './session-attributes.js'

/** sessions kept per partition (~200 bytes each beside the shared strings); when full, it starts again */
const KEPT = 65_536

export class ColdAttributes {
  /** session → its place in #values */
  readonly #at = new U64Map()
  #values: (readonly (string | null)[])[] = []
  /** sessions being read → reads under way */
  readonly #reading = new U64Map()
  readonly #overtaken = new U64Map()

  /** the kept attributes of a session out of memory, or undefined */
  get(hi: number, lo: number): readonly (string | null)[] | undefined {
    const i = this.#at.get(hi, lo)
    return i === undefined ? undefined : this.#values[i]
  }

  /** A session came back into memory, or left it. */
  passed(hi: number, lo: number): void {
    if (this.#at.size > 0) this.#at.delete(hi, lo)
    if (this.#reading.size > 0 && this.#reading.has(hi, lo)) this.#overtaken.set(hi, lo, 1)
  }

  /**
   * Reads the attributes of sessions (`sessions`: [hi, lo, …]) through `read` (their stored
   * summaries by hash key; none: no values) and keeps them.
   */
  async read(sessions: readonly number[], read: (hks: string[]) => Promise<(SessionSummary | undefined)[]>): Promise<(readonly (string | null)[])[]> {
    const hks: string[] = []
    for (let i = 0; i < sessions.length; i += 2) {
      hks.push(hashKey(sessions[i], sessions[i + 1]))
      this.#reading.set(sessions[i], sessions[i + 1], (this.#reading.get(sessions[i], sessions[i + 1]) ?? 0) + 1)
    }
    try {
      const stored = await read(hks)
      return stored.map((s, k) => {
        const values = s ? summaryAttributes(s) : NO_VALUES
        const hi = sessions[2 * k]
        const lo = sessions[2 * k + 1]
        if (!this.#overtaken.has(hi, lo)) this.#keep(hi, lo, values)
        return values
      })
    } finally {
      for (let i = 0; i < sessions.length; i += 2) {
        const n = this.#reading.get(sessions[i], sessions[i + 1])! - 1
        if (n > 0) this.#reading.set(sessions[i], sessions[i + 1], n)
        else {
          this.#reading.delete(sessions[i], sessions[i + 1])
          this.#overtaken.delete(sessions[i], sessions[i + 1])
        }
      }
    }
  }

  #keep(hi: number, lo: number, values: readonly (string | null)[]): void {
    const held = this.#at.get(hi, lo)
    if (held !== undefined) {
      this.#values[held] = values
      return
    }
    if (this.#values.length >= KEPT) {
      this.#at.clear()
      this.#values = []
    }
    this.#at.set(hi, lo, this.#values.length)
    this.#values.push(values)
  }
}
