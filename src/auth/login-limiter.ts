/**
 * Failed logins over a sliding minute, counted twice: per e-mail (docs/api.md §2 allows 10, so one
 * account cannot be guessed at) and per client address (so one client cannot try many accounts).
 * The e-mail is normalized as the user lookup does it — trimmed and lower-cased — so that
 * " lim@example.com" and "Lim@Example.Com" count as the account they log into. A blocked attempt
 * is refused before the password is checked: scrypt is deliberately expensive.
 */
export interface LoginLimits {
  /** failed attempts a minute for one e-mail (default 10) */
  perEmail?: number
  /**
   * failed attempts a minute from one client address (default 50): several people behind one NAT
   * address mistyping their passwords stay well under it, while trying account after account
   * slows to under a guess a second
   */
  perAddress?: number
  /** wrong bearer tokens a minute from one client address (default 30) */
  perAddressTokens?: number
  windowMs?: number
}

export type LoginBlock = 'email' | 'address'

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export class LoginLimiter {
  readonly #email: FailureWindow
  readonly #address: FailureWindow
  readonly #token: FailureWindow
  readonly #bearer: FailureWindow

  constructor(limits: LoginLimits = {}) {
    const windowMs = limits.windowMs ?? 60_000
    this.#email = new FailureWindow(limits.perEmail ?? 10, windowMs)
    this.#address = new FailureWindow(limits.perAddress ?? 50, windowMs)
    this.#token = new FailureWindow(limits.perEmail ?? 10, windowMs)
    this.#bearer = new FailureWindow(limits.perAddressTokens ?? 30, windowMs)
  }

  /**
   * Starts an admin-token sign-in: there is no account to key on, so failures count per client
   * address. Returns true when it is refused; counted as a failure until `tokenAccepted`.
   */
  beginToken(address: string, now = Date.now()): boolean {
    if (this.#token.full(address, now)) return true
    this.#token.add(address, now)
    return false
  }

  tokenAccepted(address: string, at: number): void {
    this.#token.remove(address, at)
  }

  /**
   * Bearer tokens on API routes (admin token or API key): an address that sent too many wrong ones
   * in the last minute is refused before its token is even looked at, so tokens cannot be guessed
   * at the speed of the server.
   */
  bearerBlocked(address: string, now = Date.now()): boolean {
    return this.#bearer.full(address, now)
  }

  bearerFailed(address: string, now = Date.now()): void {
    this.#bearer.add(address, now)
  }

  /**
   * Starts an attempt: refuses it (saying what blocks it) or counts it as a failure against both
   * limits right away, before the password is checked, so that concurrent attempts cannot slip
   * past the limit while their scrypt runs. `succeed` takes the count back.
   */
  begin(email: string, address: string, now = Date.now()): LoginBlock | null {
    const account = normalizeEmail(email)
    if (this.#email.full(account, now)) return 'email'
    if (this.#address.full(address, now)) return 'address'
    this.#email.add(account, now)
    this.#address.add(address, now)
    return null
  }

  /** The attempt begun at `at` had the right password: the account's failures are cleared. */
  succeed(email: string, address: string, at: number): void {
    this.#email.clear(normalizeEmail(email))
    this.#address.remove(address, at)
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

  /** takes back one failure recorded at `at` */
  remove(key: string, at: number): void {
    const list = this.#failures.get(key)
    const i = list?.indexOf(at) ?? -1
    if (i !== -1) list!.splice(i, 1)
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
