/**
 * Whether a store takes writes: healthy until a write fails, then a probe write every `probeMs`
 * until one succeeds (or any other write does), so the log heals by itself once the disk has
 * room, without waiting for traffic.
 */
import type { LogError } from '../errors.js'

export class WriteHealth {
  readonly #probeMs: number
  readonly #onFailure: (err: LogError) => void
  readonly #probe: () => Promise<void>
  #healthy = true
  #stopped = false
  #timer: NodeJS.Timeout | undefined

  /** `probe` writes something small; it reports its own failure through `failed` or not at all. */
  constructor(probeMs: number, onFailure: (err: LogError) => void, probe: () => Promise<void>) {
    this.#probeMs = probeMs
    this.#onFailure = onFailure
    this.#probe = probe
  }

  get healthy(): boolean {
    return this.#healthy
  }

  /** A write failed: unhealthy, reported, and probed until a write succeeds. Returns `err`. */
  failed(err: LogError): LogError {
    this.#healthy = false
    this.#onFailure(err)
    this.#schedule()
    return err
  }

  succeeded(): void {
    this.#healthy = true
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      if (this.#healthy || this.#stopped) return
      this.#probe().then(() => this.succeeded(), () => this.#schedule())
    }, this.#probeMs)
    this.#timer.unref()
  }
}
