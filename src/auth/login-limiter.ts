/**
 * Failed logins over a sliding minute, counted twice: per e-mail (API.md §2 allows 10, so one
 * account cannot be guessed at) and per client address (so one client cannot try many accounts).
 * The e-mail is normalized as the user lookup does it — trimmed and lower-cased — so that
 * " lim@example.com" and "Lim@Example.Com" count as the account they log into. A blocked attempt
 * is refused before the password is checked: scrypt is deliberately expensive.
 */
export interface LoginLimits {
  /** failed attempts a minute for one e-mail (default 10) */
  perEmail?: number
  /**
   * failed attempts a minute from one client address (default 30): generous enough for an office
   * behind one NAT address, tight enough that trying other accounts stays slow
   */
  perAddress?: number
  windowMs?: number
}

export type LoginBlock = 'email' | 'address'

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export class LoginLimiter {
  readonly #email: FailureWindow
  readonly #address: FailureWindow

  constructor(limits: LoginLimits = {}) {
    const windowMs = limits.windowMs ?? 60_000
    this.#email = new FailureWindow(limits.perEmail ?? 10, windowMs)
    this.#address = new FailureWindow(limits.perAddress ?? 30, windowMs)
  }

  /** what blocks an attempt for `email` from `address`, if anything */
  blocked(email: string, address: string, now = Date.now()): LoginBlock | null {
    if (this.#email.full(normalizeEmail(email), now)) return 'email'
    if (this.#address.full(address, now)) return 'address'
    return null
  }

  fail(email: string, address: string, now = Date.now()): void {
    this.#email.add(normalizeEmail(email), now)
    this.#address.add(address, now)
  }

  /** a right password clears the account's failures; the address keeps its own */
  succeed(email: string): void {
    this.#email.clear(normalizeEmail(email))
  }
}

/** Failure times per key inside a sliding window, swept when the keys grow many. */
class FailureWindow {
  readonly #failures = new Map<string, number[]>()
  readonly #max: number
  readonly #windowMs: number

  constructor(max: number, windowMs: number) {
    this.#max = max
    this.#windowMs = windowMs
  }

  full(key: string, now: number): boolean {
    return this.#recent(key, now).length >= this.#max
  }

  add(key: string, now: number): void {
    const list = this.#recent(key, now)
    list.push(now)
    this.#failures.set(key, list)
    if (this.#failures.size > 100_000) this.#sweep(now)
  }

  clear(key: string): void {
    this.#failures.delete(key)
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
