/** The few calls the benches make to a running service: admin setup, metrics, the goals answer. */

export async function call(base, method, path, { token, body } = {}) {
  const headers = {}
  if (token) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }
  let res
  try {
    res = await fetch(base + path, init)
  } catch (err) {
    // a kept-alive connection the server closed while idle fails once; a dead server fails again
    // (our calls are reads, or writes refused as duplicates on a repeat)
    process.stderr.write(`  (${method} ${path}: ${err.cause?.code ?? err.message}; retrying once)\n`)
    res = await fetch(base + path, init)
  }
  const text = await res.text()
  let json
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, body: json, text }
}

/** Sum of the samples of a Prometheus metric whose labels include `labels`. */
export function metricValue(text, name, labels = {}) {
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line)
    if (!m || m[1] !== name) continue
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[4])
  }
  return sum
}

export async function metrics(base) {
  return (await call(base, 'GET', '/metrics')).text
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the stream processor has folded everything in the log; returns the ms it took. */
export async function waitFolded(base, timeoutMs = 300_000) {
  const started = Date.now()
  for (;;) {
    const text = await metrics(base)
    // on Kafka a partition steps over the last commit marker when asked its lag (PartitionTask.stepToEnd)
    const lag = metricValue(text, 'goalpost_stream_lag_records')
    if (lag === 0) return Date.now() - started
    if (Date.now() - started > timeoutMs) throw new Error(`stream lag still ${lag} after ${timeoutMs} ms`)
    await sleep(100)
  }
}

/**
 * A counter's value once the service has finished what it already received: requests still queued
 * when a load run stops are answered (and counted) after it, so read only after two equal readings.
 */
export async function settledMetric(base, name, labels, intervalMs = 250) {
  let last = metricValue(await metrics(base), name, labels)
  for (;;) {
    await sleep(intervalMs)
    const now = metricValue(await metrics(base), name, labels)
    if (now === last) return now
    last = now
  }
}
