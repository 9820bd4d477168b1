import { randomBytes } from 'node:crypto'

const DAY_MS = 86_400_000

/** An id unique to this run, valid both as a site id and as a session id. */
export function uid(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`
}

/** ISO instant `minutes` before now, whole seconds (the server may keep only those). */
export function minutesAgo(minutes: number, from = Date.now()): string {
  return new Date(Math.floor((from - minutes * 60_000) / 1000) * 1000).toISOString()
}

export function startOfUtcDay(ms = Date.now()): number {
  return Math.floor(ms / DAY_MS) * DAY_MS
}

/**
 * An instant on the UTC calendar day `days` before today, at `hour`:`minute` UTC. For today it is
 * clamped into [midnight, one minute ago] so it is never in the future and never yesterday.
 */
export function daysAgo(days: number, hour = 12, minute = 0): string {
  const now = Date.now()
  const start = startOfUtcDay(now) - days * DAY_MS
  let at = start + hour * 3_600_000 + minute * 60_000
  if (days === 0) at = Math.max(start, Math.min(at, now - 60_000))
  return new Date(Math.floor(at / 1000) * 1000).toISOString()
}

/** The calendar date (YYYY-MM-DD) of an instant in an IANA time zone. */
export function dateInZone(instant: number | string, timeZone: string): string {
  const ms = typeof instant === 'string' ? Date.parse(instant) : instant
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms)
}

/** A YYYY-MM-DD date moved by whole days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
}

export const UA = {
  chromeLinux: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  androidPhone: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
} as const

export type EventBody = Record<string, unknown>

/** A pageview a desktop browser would send, a few minutes ago unless `extra` says otherwise. */
export function pageview(siteId: string, sessionId: string, path: string, extra: EventBody = {}): EventBody {
  return {
    type: 'pageview',
    site_id: siteId,
    session_id: sessionId,
    url: `https://example.com${path}`,
    path,
    user_agent: UA.chromeLinux,
    screen: { width: 1920, height: 1080 },
    timestamp: minutesAgo(2),
    ...extra,
  }
}

export function customEvent(siteId: string, sessionId: string, eventName: string, extra: EventBody = {}): EventBody {
  return {
    type: 'custom_event',
    site_id: siteId,
    session_id: sessionId,
    event_name: eventName,
    user_agent: UA.chromeLinux,
    screen: { width: 1920, height: 1080 },
    timestamp: minutesAgo(2),
    ...extra,
  }
}
