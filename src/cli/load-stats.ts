import { createHistogram, type RecordableHistogram } from 'node:perf_hooks'

/** What a load run reports: throughput, latency and every failure by kind. */
export interface LoadResult {
  seconds: number
  /** requests that got an answer or failed */
  requests: number
  /** requests answered 2xx, and the events in them */
  ok: number
  okEvents: number
  requestsPerSec: number
  eventsPerSec: number
  /** over acknowledged requests only, ms */
  latencyMs: { p50: number; p99: number; max: number; mean: number }
  /** answers by HTTP status (or `acked` for a broker), e.g. { "202": 1000, "503": 3 } */
  byStatus: Record<string, number>
  /** requests without an answer, by cause: ECONNRESET, timeout, … */
  errors: Record<string, number>
}

/** Counts answers as they come; latencies go to a histogram of nanoseconds. */
export class LoadStats {
  requests = 0
  ok = 0
  okEvents = 0
  readonly #byStatus = new Map<string, number>()
  readonly #errors = new Map<string, number>()
  readonly #latency: RecordableHistogram = createHistogram()

  answered(status: string, ok: boolean, events: number, nanos: number): void {
    this.requests++
    this.#byStatus.set(status, (this.#byStatus.get(status) ?? 0) + 1)
    if (!ok) return
    this.ok++
    this.okEvents += events
    this.#latency.record(Math.max(1, Math.round(nanos)))
  }

  failed(cause: string): void {
    this.requests++
    this.#errors.set(cause, (this.#errors.get(cause) ?? 0) + 1)
  }

  get failures(): number {
    return this.requests - this.ok
  }

  result(seconds: number): LoadResult {
    const h = this.#latency
    const msOf = (ns: number) => (this.ok ? ns / 1e6 : NaN)
    return {
      seconds,
      requests: this.requests,
      ok: this.ok,
      okEvents: this.okEvents,
      requestsPerSec: this.ok / seconds,
      eventsPerSec: this.okEvents / seconds,
      latencyMs: { p50: msOf(h.percentile(50)), p99: msOf(h.percentile(99)), max: msOf(h.max), mean: msOf(h.mean) },
      byStatus: Object.fromEntries(this.#byStatus),
      errors: Object.fromEntries(this.#errors),
    }
  }
}
