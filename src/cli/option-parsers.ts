import { InvalidArgumentError } from 'commander'
import { parseMix, type EventMix } from './event-mix.js'

/**
 * Parsers for flag values. Commander turns their InvalidArgumentError into
 * `error: option '--flag <x>' argument 'v' is invalid. <sentence>` and exit code 2.
 */

export const integer = (min: number, max: number) => (value: string): number => {
  const n = Number(value)
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`)
  return n
}

export const positiveSeconds = (value: string): number => {
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number of seconds above 0')
  return n
}

export function httpUrl(value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://127.0.0.1:8080')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http:// or https:// URL')
  return url
}

export function brokerList(value: string): string[] {
  const brokers = value.split(',').map((s) => s.trim()).filter(Boolean)
  if (brokers.length === 0 || brokers.some((b) => !/^[^\s:/]+:\d{1,5}$/.test(b))) throw new InvalidArgumentError('must be host:port[,host:port...]')
  return brokers
}

export function eventMix(value: string): EventMix {
  try {
    return parseMix(value)
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message)
  }
}

export const matching = (pattern: RegExp, what: string) => (value: string): string => {
  if (!pattern.test(value)) throw new InvalidArgumentError(`must be ${what}`)
  return value
}
