-- The WRK_RESULT line load.mjs reads: wrk's own counts and latency percentiles, as JSON.
function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"n":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    summary.requests, latency.mean, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
