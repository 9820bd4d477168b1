/**
 * The attributes of sessions out of memory, as their stored summaries hold them, kept for the
 * queries that read the same sessions again and again: a breakdown takes each session counted on
 * several days of its window off its value, and most of those sessions have left memory. An entry
 * is asked only for a session out of memory, where its summary cannot change; it is forgotten
 * whenever the session comes back into memory or leaves it (it may have changed in between), and
 * a read that such a passage overtook is not kept.
 */
import { LRUCache } from 'lru-cache'
import type { SessionSummary } from '../schema/index.js'
import { hashKey } from '../sketch/index.js'
import { DIMENSIONS, summaryAttributes } from './session-attributes.js'

/** sessions kept per partition (~200 bytes each beside the shared strings) */
const KEPT = 65_536
const NONE: readonly (string | null)[] = new Array<string | null>(DIMENSIONS).fill(null)

export class ColdAttributes {
  readonly #kept = new LRUCache<string, readonly (string | null)[]>({ max: KEPT })
  readonly #reading = new Map<string, number>()
  readonly #overtaken = new Set<string>()

  /** the kept attributes of a session out of memory (by hash key), or undefined */
  get(hk: string): readonly (string | null)[] | undefined {
    return this.#kept.get(hk)
  }

  /** A session came back into memory, or left it. */
  passed(hi: number, lo: number): void {
    if (this.#kept.size === 0 && this.#reading.size === 0) return
    const hk = hashKey(hi, lo)
    this.#kept.delete(hk)
    if (this.#reading.has(hk)) this.#overtaken.add(hk)
  }

  /** Reads sessions' attributes through `read` (their stored summaries; none: no values) and keeps them. */
  async read(hks: string[], read: (hks: string[]) => Promise<(SessionSummary | undefined)[]>): Promise<(readonly (string | null)[])[]> {
    for (const hk of hks) this.#reading.set(hk, (this.#reading.get(hk) ?? 0) + 1)
    try {
      const stored = await read(hks)
      return hks.map((hk, i) => {
        const s = stored[i]
        const values = s ? summaryAttributes(s) : NONE
        if (!this.#overtaken.has(hk)) this.#kept.set(hk, values)
        return values
      })
    } finally {
      for (const hk of hks) {
        const n = this.#reading.get(hk)! - 1
        if (n > 0) this.#reading.set(hk, n)
        else {
          this.#reading.delete(hk)
          this.#overtaken.delete(hk)
        }
      }
    }
  }
}
