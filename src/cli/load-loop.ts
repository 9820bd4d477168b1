import type { LoadStats } from './load-stats.js'

/** One request's outcome; a request that got no answer throws instead. */
export interface Answer {
  status: string
  ok: boolean
}

export interface LoopOptions {
  /** requests in flight at once (connections, or concurrent sends to a broker) */
  concurrency: number
  durationMs: number
  eventsPerRequest: number
  stats: LoadStats
  /** sends events `first` … `first + n − 1` */
  send(first: number, n: number): Promise<Answer>
  /** events `first` … `first + n − 1` were acknowledged */
  onAck(first: number, n: number): void
  /** stops starting requests early (Ctrl-C); those in flight still finish */
  signal?: AbortSignal
}

/** after a request got no answer, so a dead target does not turn the loop into a busy spin */
const PAUSE_AFTER_FAILURE_MS = 50

/**
 * Closed-loop load: each of `concurrency` workers sends its next request once the previous one was
 * answered. Starting stops at the deadline, then every request in flight is waited for, so that
 * every acknowledged event is known — the count the service must report afterwards.
 */
export async function runLoop(o: LoopOptions): Promise<number> {
  const started = performance.now()
  const deadline = started + o.durationMs
  let next = 0
  const worker = async () => {
    while (performance.now() < deadline && !o.signal?.aborted) {
      const first = next
      next += o.eventsPerRequest
      const t0 = performance.now()
      try {
        const a = await o.send(first, o.eventsPerRequest)
        o.stats.answered(a.status, a.ok, o.eventsPerRequest, (performance.now() - t0) * 1e6)
        if (a.ok) o.onAck(first, o.eventsPerRequest)
      } catch (err) {
        o.stats.failed(causeOf(err))
        await new Promise((resolve) => setTimeout(resolve, PAUSE_AFTER_FAILURE_MS))
      }
    }
  }
  await Promise.all(Array.from({ length: o.concurrency }, worker))
  return (performance.now() - started) / 1000
}

/** A short name for why a request got no answer: a system error code, `timeout`, or the error's name. */
export function causeOf(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown } }
  if (typeof e?.code === 'string') return e.code
  if (typeof e?.cause?.code === 'string') return e.cause.code
  if (e?.name === 'TimeoutError' || e?.name === 'KafkaJSRequestTimeoutError') return 'timeout'
  return typeof e?.name === 'string' ? e.name : 'error'
}
