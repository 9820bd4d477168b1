/**
 * Exact money arithmetic: amounts are integers of 1/10 000 units (four decimal places) held in
 * BigInt, since a sum of amounts below 10^12 leaves Number's exact integers after a few hundred.
 * Never floating point (docs/api.md §9.2).
 */
export const SCALE = 10_000n
const DECIMAL = /^(\d{1,12})(?:\.(\d{1,4}))?$/

/**
 * An event's amount in units, or undefined when it is not a valid amount. A number is read by its
 * shortest round-trip spelling (what JSON wrote), so 49.9 is 499 000 units exactly.
 */
export function parseAmount(amount: string | number): bigint | undefined {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) && amount >= 0 ? String(amount) : '') : amount
  const m = DECIMAL.exec(text)
  if (!m) return undefined
  return BigInt(m[1]) * SCALE + BigInt((m[2] ?? '').padEnd(4, '0'))
}

/** Units as a decimal string with exactly four places: 499000n → "49.9000". */
export function formatUnits(units: bigint): string {
  const sign = units < 0n ? '-' : ''
  const abs = units < 0n ? -units : units
  return `${sign}${abs / SCALE}.${String(abs % SCALE).padStart(4, '0')}`
}

/** `total / n` in units, rounded to the nearest unit, halves away from zero; 0 when n is 0. */
export function divideRounded(total: bigint, n: number): bigint {
  if (n === 0) return 0n
  const d = BigInt(n)
  const neg = total < 0n !== d < 0n
  const a = total < 0n ? -total : total
  const b = d < 0n ? -d : d
  const q = (2n * a + b) / (2n * b)
  return neg ? -q : q
}
