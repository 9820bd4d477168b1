import type { EventType } from '../schema/index.js'
import type { SentEvent } from './bench-goals.js'

/**
 * Where a session's identity goes in a template: replaced by 12 hex digits per session block, so
 * that a body's length never changes (a load generator can build requests by concatenation).
 */
export const SESSION_MARK = '@@@@@@@@@@@@'

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
]
const SCREENS = [
  { width: 1920, height: 1080, viewport_width: 1903, viewport_height: 961, pixel_ratio: 1 },
  { width: 1440, height: 900, viewport_width: 1440, viewport_height: 789, pixel_ratio: 2 },
  { width: 390, height: 844, viewport_width: 390, viewport_height: 664, pixel_ratio: 3 },
  { width: 412, height: 915, viewport_width: 412, viewport_height: 783, pixel_ratio: 2.625 },
]
const REFERRERS = ['https://www.google.com/', 'https://duckduckgo.com/', 'https://news.ycombinator.com/', undefined, undefined]
export const PAGES = [
  '/', '/products', '/products/espresso-grinder', '/products/milk-jug', '/blog/latte-art', '/blog/beans/origin',
  '/pricing', '/cart', '/checkout/complete', '/docs/install', '/docs/api/events',
]
export const EVENT_NAMES = ['signup', 'add_to_cart', 'download', 'newsletter']

/** Which event of which session a template stands for; every choice below derives from it. */
export interface TemplateSlot {
  siteId: string
  type: EventType
  /** the session's class: sessions of one class differ only in their identity */
  cls: number
  step: number
  /** distinguishes the sessions of one run from any earlier run's */
  run: string
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length]
const mix = (a: number, b: number) => (Math.imul(a + 1, 0x9e3779b1) ^ Math.imul(b + 1, 0x85ebca6b)) >>> 0

/** A browser-like event body for one slot, with SESSION_MARK where the session's identity goes. */
export function eventTemplate(s: TemplateSlot): SentEvent & Record<string, unknown> {
  const host = `${s.siteId}.example`
  const h = mix(s.cls, s.step)
  const path = s.step === 0 ? pick(PAGES, s.cls) : pick(PAGES, h)
  const base = {
    type: s.type,
    site_id: s.siteId,
    session_id: `${s.run}-${SESSION_MARK}${String(s.cls).padStart(2, '0')}`,
    visitor_id: `${s.run}-v${SESSION_MARK}${String(s.cls).padStart(2, '0')}`,
    url: `https://${host}${path}`,
    path,
    hostname: host,
    language: 'en-US',
    user_agent: pick(USER_AGENTS, s.cls),
    screen: pick(SCREENS, s.cls),
  }
  switch (s.type) {
    case 'pageview': {
      const referrer = s.step === 0 ? pick(REFERRERS, s.cls) : `https://${host}${pick(PAGES, h >>> 8)}`
      return { ...base, title: `${path === '/' ? 'Home' : path.slice(1).replace(/[/-]/g, ' ')} | Shop`, ...(referrer ? { referrer } : {}) }
    }
    case 'pageleave':
      return { ...base, duration: 1000 + (h % 120_000) }
    case 'custom_event':
      return { ...base, event_name: pick(EVENT_NAMES, h >>> 4), properties: { plan: h % 2 ? 'pro' : 'free' } }
    case 'web_vitals':
      return { ...base, vitals: { lcp: 800 + (h % 3000), cls: (h % 30) / 100, inp: 40 + (h % 400), fcp: 300 + (h % 1500), ttfb: 50 + (h % 600) } }
    case 'external_link':
      return { ...base, properties: { url: `https://partner-${h % 9}.example/` } }
    case 'error':
      return { ...base, error_name: 'TypeError', error_message: `x${h % 50} is undefined`, error_stack: `TypeError: x is undefined\n    at main (https://${host}/app.js:1:${h % 900})` }
    case 'payment':
      return { ...base, provider: 'stripe', properties: { amount: 5 + (h % 200), currency: 'EUR' } }
    case 'identify':
      return { ...base, user_id: `user-${h % 100_000}` }
    default:
      // button_click, form_submit, copy: an element and what it said
      return { ...base, properties: { element: `#el-${h % 40}`, text: pick(['Buy now', 'Subscribe', 'Read more', 'Copy code'], h) } }
  }
}
