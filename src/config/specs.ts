/**
 * How each kind of setting is read from the environment and which values it accepts. A spec
 * parses the text of an environment variable and checks a value from either source (a config
 * file holds JSON values), so `config/*.json` is held to the same ranges.
 */
import { isIP } from 'node:net'
import { parseProxyEntry } from '../http/index.js'

export interface Spec<T> {
  /** the accepted values, as a phrase: "an integer from 1 to 65535" */
  accepts: string
  /** the value an environment string stands for, or undefined when it stands for none */
  parse(raw: string): T | undefined
  /** whether a value (parsed, or from a config file) is accepted */
  valid(value: unknown): value is T
}

export const integer = (min: number, max: number): Spec<number> => ({
  accepts: `an integer from ${min} to ${max}`,
  parse: (raw) => (/^[+-]?\d+$/.test(raw.trim()) ? Number(raw) : undefined),
  valid: (v): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max,
})

export const decimal = (min: number, max: number, note = ''): Spec<number> => ({
  accepts: `a number from ${min} to ${max}${note}`,
  parse: (raw) => (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(raw.trim()) ? Number(raw) : undefined),
  valid: (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max,
})

export const oneOf = <T extends string>(...values: T[]): Spec<T> => ({
  accepts: `one of ${values.join(', ')}`,
  parse: (raw) => raw.trim() as T,
  valid: (v): v is T => values.includes(v as T),
})

const TRUE = /^(1|true|yes|on)$/i
const FALSE = /^(0|false|no|off)$/i
export const flag: Spec<boolean> = {
  accepts: 'true or false (also 1/0, yes/no, on/off)',
  parse: (raw) => (TRUE.test(raw.trim()) ? true : FALSE.test(raw.trim()) ? false : undefined),
  valid: (v): v is boolean => typeof v === 'boolean',
}

export const text = (accepts: string, ok: (s: string) => boolean): Spec<string> => ({
  accepts,
  parse: (raw) => raw,
  valid: (v): v is string => typeof v === 'string' && ok(v),
})

/** A comma-separated list in the environment, an array in a file; every item checked by `ok`. */
export const list = (accepts: string, ok: (s: string) => boolean): Spec<string[]> => ({
  accepts,
  parse: (raw) => raw.split(',').map((s) => s.trim()).filter(Boolean),
  valid: (v): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && ok(s)),
})

/** a host name (RFC 1123 labels) or an IP address */
export function isHost(s: string): boolean {
  return isIP(s) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s)
}

/** host:port, the host a name, an IPv4 address or a bracketed IPv6 address */
export function isBroker(s: string): boolean {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(s)
  if (!m) return false
  const host = m[1].startsWith('[') ? m[1].slice(1, -1) : m[1]
  const port = Number(m[2])
  return (m[1].startsWith('[') ? isIP(host) === 6 : isHost(host)) && port >= 1 && port <= 65535
}

export function isHttpUrl(s: string): boolean {
  try {
    const url = new URL(s)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

export function isProxyEntry(s: string): boolean {
  try {
    parseProxyEntry(s)
    return true
  } catch {
    return false
  }
}
