/** Plain-text tables and number formats for terminal reports (the CLI's and the benches'). */

type Cell = string | number | null | undefined

/** The first row is the header; columns after the first are right-aligned. */
export function table(rows: Cell[][]): string {
  const cells = rows.map((r) => r.map((c) => (c === undefined || c === null ? '' : String(c))))
  const header = cells[0] ?? []
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd()
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [line(header), rule, ...cells.slice(1).map(line)].join('\n')
}

export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a')
export const ms = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a')
export const pct = (x: number, digits = 0): string => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)} %` : 'n/a')

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
export function bytes(n: number): string {
  if (!Number.isFinite(n)) return 'n/a'
  let u = 0
  while (Math.abs(n) >= 1024 && u < UNITS.length - 1) {
    n /= 1024
    u++
  }
  return `${n.toFixed(u === 0 ? 0 : 1)} ${UNITS[u]}`
}
