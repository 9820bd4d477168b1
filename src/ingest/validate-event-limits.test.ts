import t from 'tap'
import { CUT_FIELDS, LIMITS } from '../schema/index.js'
import type { IngestContext, SiteInfo } from './context.js'
import { validateEvent } from './validate-event.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = { now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: false }

type Body = Record<string, unknown>
const pageview = (extra: Body = {}): Body => ({ type: 'pageview', site_id: 's1', session_id: 'sess-1', ...extra })

function errorOf(raw: unknown): string | undefined {
  const r = validateEvent(raw, ctx)
  return r.kind === 'reject' ? r.error : undefined
}

function eventOf(raw: unknown): Body {
  const r = validateEvent(raw, ctx)
  if (r.kind === 'reject') throw new Error(`unexpected reject: ${r.error}`)
  return r.event
}

/** sets `value` at a dotted path such as `utm.source` */
function withField(path: string, value: unknown): Body {
  const [head, tail] = path.split('.') as [string, string | undefined]
  return pageview({ [head]: tail === undefined ? value : { [tail]: value } })
}

const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s

t.test('identifying strings: at the limit accepted, one over rejected', async (t) => {
  const limits: [string, number][] = [
    ['path', 2048],
    ['event_name', 256],
    ['user_id', 256],
    ['hostname', 256],
    ['language', 256],
    ['error_name', 256],
    ['provider', 256],
    ['utm.source', 256],
    ['utm.medium', 256],
    ['utm.campaign', 256],
    ['utm.term', 256],
    ['utm.content', 256],
    ['ad_click_ids.gclid', 256],
  ]
  for (const [field, limit] of limits) {
    t.equal(errorOf(withField(field, 'x'.repeat(limit))), undefined, `${field} at ${limit}`)
    t.equal(errorOf(withField(field, 'x'.repeat(limit + 1))), `${field} must be at most ${limit} characters`, `${field} over`)
  }
})

t.test('lengths are counted as JavaScript counts them (UTF-16 units)', async (t) => {
  t.equal(errorOf(pageview({ hostname: '😀'.repeat(128) })), undefined, '256 units')
  t.equal(errorOf(pageview({ hostname: '😀'.repeat(129) })), 'hostname must be at most 256 characters', '129 emoji are 258 units')
  t.equal(errorOf(pageview({ event_name: 'é'.repeat(256) })), undefined, 'one unit each')
})

t.test('descriptive text is cut to 2048 characters, never rejected', async (t) => {
  for (const field of CUT_FIELDS) {
    const atLimit = 'a'.repeat(LIMITS.text)
    t.equal(eventOf(pageview({ [field]: atLimit }))[field], atLimit, `${field} at the limit is kept`)
    const long = 'b'.repeat(LIMITS.text) + 'tail'.repeat(5000)
    t.equal(eventOf(pageview({ [field]: long }))[field], 'b'.repeat(LIMITS.text), `${field} is cut`)
  }
})

t.test('a cut never splits a surrogate pair', async (t) => {
  const text = 'a' + '😀'.repeat(1500) // the pair at units 2047–2048 straddles the limit
  const cut = eventOf(pageview({ title: text })).title as string
  t.equal(cut.length, 2047)
  t.ok(wellFormed(cut))
  t.ok(text.startsWith(cut))
  const even = '😀'.repeat(1500) // a pair ends exactly at 2048
  t.equal((eventOf(pageview({ title: even })).title as string).length, 2048)
})

t.test('error_stack is cut to 2048 bytes on a UTF-8 boundary', async (t) => {
  const cases: [string, string, number][] = [
    // [label, text, expected UTF-8 length after the cut]
    ['ASCII at the limit', 'a'.repeat(2048), 2048],
    ['ASCII one over', 'a'.repeat(2049), 2048],
    ['2-byte characters', 'é'.repeat(1500), 2048],
    ['3-byte characters', '€'.repeat(700), 2046], // 682 × 3; the 683rd would need 2049
    ['3-byte after one ASCII', 'a' + '€'.repeat(700), 2047],
    ['4-byte characters', '😀'.repeat(600), 2048],
    ['4-byte after one ASCII', 'a' + '😀'.repeat(600), 2045],
  ]
  for (const [label, text, bytes] of cases) {
    const cut = eventOf(pageview({ type: 'error', error_stack: text })).error_stack as string
    t.equal(Buffer.byteLength(cut), bytes, label)
    t.ok(text.startsWith(cut), `${label}: a prefix`)
    t.ok(wellFormed(cut), `${label}: well-formed`)
  }
  const short = 'Error: x\n    at f (app.js:1:2)'
  t.equal(eventOf(pageview({ error_stack: short })).error_stack, short)
})

t.test('text is cut before it is checked, so a cut field still has to be a string', async (t) => {
  t.equal(errorOf(pageview({ title: 12 })), 'title must be a string')
  t.equal(errorOf(pageview({ error_stack: 12 })), 'error_stack must be a string')
})

t.test('properties: at most 32 keys', async (t) => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
  t.equal(errorOf(pageview({ properties: keys(32) })), undefined)
  t.equal(errorOf(pageview({ properties: keys(33) })), 'properties must have at most 32 keys')
  t.equal(errorOf(pageview({ properties: {} })), undefined)
})

t.test('properties: at most 4096 bytes when serialized', async (t) => {
  // {"k":"…"} is 8 bytes around the value
  const sized = (bytes: number) => ({ k: 'v'.repeat(bytes - 8) })
  t.equal(Buffer.byteLength(JSON.stringify(sized(4096))), 4096)
  t.equal(errorOf(pageview({ properties: sized(4096) })), undefined, 'exactly 4096 bytes')
  t.equal(errorOf(pageview({ properties: sized(4097) })), 'properties must be at most 4096 bytes when serialized')
  // 2100 × é: 2108 characters serialized but 4208 bytes
  t.equal(errorOf(pageview({ properties: { k: 'é'.repeat(2100) } })), 'properties must be at most 4096 bytes when serialized', 'bytes, not characters')
  t.equal(errorOf(pageview({ properties: { k: 'é'.repeat(2044) } })), undefined, '4096 bytes of 2-byte characters')
})

t.test('properties: values of any length within the byte limit; keys up to 256 characters', async (t) => {
  t.equal(errorOf(pageview({ properties: { text: 'x'.repeat(1000) } })), undefined)
  t.equal(errorOf(pageview({ properties: { ['k'.repeat(256)]: 1 } })), undefined)
  t.equal(errorOf(pageview({ properties: { ['k'.repeat(257)]: 1 } })), 'properties keys must be at most 256 characters')
  t.equal(errorOf(pageview({ ad_click_ids: { ['k'.repeat(257)]: 'x' } })), 'ad_click_ids keys must be at most 256 characters')
})
