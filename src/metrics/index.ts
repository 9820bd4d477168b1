import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * Every metric the service exports, in one registry (GET /metrics, Prometheus text format).
 * Gauges of state sizes are read when scraped, not maintained on the hot path.
 */
export function createMetrics() {
  const registry = new Registry()
  // the default names already say what they are (process_cpu_user_seconds_total,
  // nodejs_eventloop_lag_seconds): the prefix only adds the service's name
  collectDefaultMetrics({ register: registry, prefix: 'goalpost_' })
  // Counting on the ingest path adds to plain numbers; the counters take them when scraped.
  // prom-client hashes the labels of every inc(), which costs more than the rest of a count.
  const ingestCounts = new PendingCounts()
  const responseCounts = new PendingCounts()
  const ingestEvents = new Counter({
    name: 'goalpost_ingest_events_total',
    help: 'Events received by POST /api/event(s), by outcome (accepted, dropped, rejected, limited, unavailable, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      ingestCounts.flush((labels, n) => this.inc({ outcome: labels[0] }, n))
    },
  })
  const httpRequests = new Counter({
    name: 'goalpost_http_requests_total',
    help: 'HTTP answers by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
    collect() {
      responseCounts.flush((labels, n) => this.inc({ route: labels[0], status: labels[1] }, n))
    },
  })
  return {
    registry,
    httpRequests,
    /** counts an answer; unknown paths share one label so scanners cannot grow the series */
    countResponse(path: string, status: number): void {
      const route = status === 404 ? 'unknown' : path
      responseCounts.add(route + '\u0000' + status)
    },
    ingestEvents,
    countIngest(outcome: string, n = 1): void {
      ingestCounts.add(outcome, n)
    },
    ingestDropped: new Counter({
      name: 'goalpost_ingest_dropped_total',
      help: 'Events answered 202 but not stored, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    logAppendFailures: new Counter({
      name: 'goalpost_log_append_failures_total',
      help: 'Appends the event log refused, by whether retrying can help (retryable: answered 503, fatal: 500)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    ingestLatency: new Histogram({
      name: 'goalpost_ingest_latency_seconds',
      help: 'Time from request to answer of ingestion requests, including the durable append',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    gauge(name: string, help: string, collect: () => number | Promise<number>): Gauge {
      return new Gauge({
        name, help, registers: [registry],
        async collect() {
          this.set(await collect())
        },
      })
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>

/**
 * Counts per label set, kept as plain numbers until a scrape hands them to their counter. A label
 * set is its values joined by a NUL, which no route or outcome holds.
 */
class PendingCounts {
  readonly #counts = new Map<string, number>()

  add(labels: string, n = 1): void {
    this.#counts.set(labels, (this.#counts.get(labels) ?? 0) + n)
  }

  flush(into: (labels: string[], n: number) => void): void {
    for (const [labels, n] of this.#counts) if (n > 0) into(labels.split('\u0000'), n)
    this.#counts.clear()
  }
}
