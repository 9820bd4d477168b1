/**
 * Failed logins per email over a sliding minute: API.md §2 allows 10; the 11th attempt inside the
 * minute is refused before the password is even checked (scrypt is deliberately expensive).
 */
export class LoginLimiter {
  readonly #failures = new Map<string, number[]>()
  readonly #max: number
  readonly #windowMs: number

  constructor(max = 10, windowMs = 60_000) {
    this.#max = max
    this.#windowMs = windowMs
  }

  blocked(email: string, now = Date.now()): boolean {
    return this.#recent(email.toLowerCase(), now).length >= this.#max
  }

  fail(email: string, now = Date.now()): void {
    const key = email.toLowerCase()
    const list = this.#recent(key, now)
    list.push(now)
    this.#failures.set(key, list)
    if (this.#failures.size > 100_000) this.#sweep(now)
  }

  succeed(email: string): void {
    this.#failures.delete(email.toLowerCase())
  }

  #recent(key: string, now: number): number[] {
    const list = this.#failures.get(key)
    if (!list) return []
    const fresh = list.filter((t) => now - t < this.#windowMs)
    if (fresh.length !== list.length) this.#failures.set(key, fresh)
    return fresh
  }

  #sweep(now: number): void {
    for (const key of this.#failures.keys()) if (this.#recent(key, now).length === 0) this.#failures.delete(key)
  }
}
