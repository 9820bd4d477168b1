/**
 * Token buckets keyed by site or client address: `rate` events per second with a burst of one
 * second's worth. 0 disables. Buckets idle long enough to be full again are forgotten.
 */
export class RateLimiter {
  readonly #rate: number
  readonly #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(ratePerSecond: number) {
    this.#rate = ratePerSecond
  }

  get enabled(): boolean {
    return this.#rate > 0
  }

  /** Takes `n` tokens; returns 0 when allowed, else the seconds to wait (for Retry-After). */
  take(key: string, n = 1, now = Date.now()): number {
    if (this.#rate <= 0) return 0
    let b = this.#buckets.get(key)
    if (!b) {
      if (this.#buckets.size > 100_000) this.#sweep(now)
      this.#buckets.set(key, (b = { tokens: this.#rate, at: now }))
    }
    b.tokens = Math.min(this.#rate, b.tokens + ((now - b.at) / 1000) * this.#rate)
    b.at = now
    if (b.tokens >= n) {
      b.tokens -= n
      return 0
    }
    return Math.max(1, Math.ceil((n - b.tokens) / this.#rate))
  }

  #sweep(now: number): void {
    for (const [k, b] of this.#buckets) if (b.tokens + ((now - b.at) / 1000) * this.#rate >= this.#rate) this.#buckets.delete(k)
  }
}
