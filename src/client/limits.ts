import type { Event } from '../schema/index.js'

/**
 * The server's limits (docs/api.md §1), repeated here because the schema module would pull its runtime
 * into the bundle; limits.test.ts holds the two equal. Identifying strings over a limit make the
 * server refuse the whole event, so everything is cut before it leaves the page.
 */
export const MAX = { string: 256, text: 2048, path: 2048, stackBytes: 2048, propertyKeys: 32, propertiesBytes: 4096 } as const

export type Properties = NonNullable<Event['properties']>

export const cut = (value: unknown, max: number = MAX.string): string => String(value).slice(0, max)

export const byteLength = (s: string): number => new Blob([s]).size

/** at most `max` UTF-8 bytes (error stacks are mostly ASCII: the loop seldom turns) */
export function cutBytes(s: string, max: number): string {
  s = s.slice(0, max)
  while (byteLength(s) > max) s = s.slice(0, -1)
  return s
}

/**
 * Properties the server accepts: string, number, boolean and null values (others left out), strings
 * cut to 2048 characters, at most 32 keys, and keys dropped from the end until the whole serializes
 * within 4 KiB. None left: undefined, so the event carries no `properties` at all.
 */
export function properties(input: unknown): Properties | undefined {
  if (!input || typeof input != 'object') return
  const out: Properties = {}
  const keys: string[] = []
  for (const [key, value] of Object.entries(input)) {
    const type = typeof value
    if (value !== null && type != 'string' && type != 'number' && type != 'boolean') continue
    if (keys.length == MAX.propertyKeys) break
    const k = cut(key)
    keys.push(k)
    out[k] = type == 'string' ? cut(value, MAX.text) : (value as number | boolean | null)
  }
  while (byteLength(JSON.stringify(out)) > MAX.propertiesBytes) delete out[keys.pop()!]
  return keys.length ? out : undefined
}

/**
 * Revenue as the server takes it (docs/api.md §9.2), or undefined without an amount and currency:
 * the currency upper-cased, a numeric amount rounded to four places (49.9 * 3 is 149.70000000000002,
 * which the server would refuse, losing the event).
 */
export function revenue(input: unknown): Event['revenue'] {
  const r = input as { amount?: unknown; currency?: unknown } | null | undefined
  if (!r || r.amount == null || !r.currency) return
  const a = r.amount
  return { amount: typeof a == 'number' ? Math.round(a * 1e4) / 1e4 : cut(a), currency: cut(r.currency).toUpperCase() }
}
