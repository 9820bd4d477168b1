/** A plain-text table: the first row is the header, columns after the first are right-aligned. */
export function table(rows) {
  const cells = rows.map((r) => r.map((c) => (c === undefined || c === null ? '' : String(c))))
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n')
}

export const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a')
export const ms = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
export const pct = (x, digits = 0) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)} %` : 'n/a')
export const bytes = (n) => {
  if (!Number.isFinite(n)) return 'n/a'
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let u = 0
  while (Math.abs(n) >= 1024 && u < units.length - 1) (n /= 1024), u++
  return `${n.toFixed(u === 0 ? 0 : 1)} ${units[u]}`
}
