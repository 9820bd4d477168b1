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
  const ingestEvents = new Counter({
    name: 'goalpost_ingest_events_total',
    help: 'Events received by POST /api/event(s), by outcome (accepted, dropped, rejected, limited, unavailable, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const httpRequests = new Counter({
    name: 'goalpost_http_requests_total',
    help: 'HTTP answers by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  })
  // label lookups hash their labels on every call, too slow for the ingest path: each label set's
  // child is bound once and kept
  const children = new Map<Counter<string>, Map<string, { inc(n?: number): void }>>()
  const bound = (counter: Counter<string>, key: string, ...labels: string[]) => {
    let byKey = children.get(counter)
    if (!byKey) children.set(counter, (byKey = new Map()))
    let child = byKey.get(key)
    if (!child) byKey.set(key, (child = counter.labels(...(labels.length ? labels : [key]))))
    return child
  }
  return {
    registry,
    httpRequests,
    /** counts an answer; unknown paths share one label so scanners cannot grow the series */
    countResponse(path: string, status: number): void {
      const route = status === 404 ? 'unknown' : path
      const key = route + ' ' + status
      bound(httpRequests, key, route, String(status)).inc()
    },
    ingestEvents,
    countIngest(outcome: string, n = 1): void {
      bound(ingestEvents, outcome).inc(n)
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
