/** Percentiles of raw samples. Sorting a copy is fine: a run holds at most a few million. */

export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/** p50 / p90 / p99 / max / mean of samples in ms (any order). */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort()
  let sum = 0
  for (const v of sorted) sum += v
  return {
    n: sorted.length,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  }
}

export const ratio = (a, b) => (b > 0 ? a / b : NaN)
