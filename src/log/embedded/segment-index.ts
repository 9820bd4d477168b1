/**
 * Where one partition's segments lie in one data file, in offset order: what a read needs to
 * find the segment holding an offset with a binary search instead of scanning the file.
 */
import type { StoredPart } from './frame-v1.js'

export class SegmentIndex {
  readonly firsts: number[] = []
  readonly counts: number[] = []
  readonly positions: number[] = []
  readonly lengths: number[] = []

  get size(): number {
    return this.firsts.length
  }

  /** the first offset held */
  get first(): number {
    return this.firsts[0]
  }

  /** one past the last offset held */
  get end(): number {
    const last = this.firsts.length - 1
    return this.firsts[last] + this.counts[last]
  }

  /** Adds a segment that continues the partition where the last one ended. */
  add(part: Pick<StoredPart, 'first' | 'count' | 'pos' | 'len'>): void {
    if (this.size > 0 && part.first !== this.end) {
      throw new Error(`a segment at offset ${part.first} does not continue the partition at ${this.end}`)
    }
    this.firsts.push(part.first)
    this.counts.push(part.count)
    this.positions.push(part.pos)
    this.lengths.push(part.len)
  }

  /** Drops the segments from the `n`-th on (a frame that was written and then undone). */
  truncate(n: number): void {
    this.firsts.length = n
    this.counts.length = n
    this.positions.length = n
    this.lengths.length = n
  }

  /** The index of the segment holding `offset`, or of the first one after it; `size` if none. */
  find(offset: number): number {
    let lo = 0
    let hi = this.firsts.length
    // the last segment whose first offset is at or below `offset`
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.firsts[mid] <= offset) lo = mid + 1
      else hi = mid
    }
    if (lo === 0) return 0
    const i = lo - 1
    return offset < this.firsts[i] + this.counts[i] ? i : lo
  }
}
