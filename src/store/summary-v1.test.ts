import t from 'tap'
import type { SessionSummary } from '../schema/index.js'
import { SNAPSHOT_VERSION } from './record-v1.js'
import { decodeSummary, encodeSummary, encodeSummaryView, lastOfSummary } from './summary-v1.js'
import { hash64, initHash } from '../sketch/index.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)

const fresh = (): SessionSummary => ({
  site_id: 'shop', session_id: 's1', visitor_id: null, user_id: null, first: T0, last: T0,
  entry_page: null, entry_at: Infinity, exit_page: null, exit_at: -Infinity, referrer: null, referrer_at: Infinity,
  user_agent: null, screen_width: null, client_at: Infinity,
  ref_host: null, ref_host_at: Infinity, utm_source: null, utm_source_at: Infinity, utm_medium: null, utm_medium_at: Infinity,
  utm_campaign: null, utm_campaign_at: Infinity, country: null, country_at: Infinity, seen: [],
})

const typical = (): SessionSummary => ({
  site_id: 'shop', session_id: 'k3j9x0aq7d2m', visitor_id: 'v-8c1f0e', user_id: null, first: T0, last: T0 + 183_000,
  entry_page: '/landing', entry_at: T0, exit_page: '/thanks', exit_at: T0 + 120_000,
  referrer: 'https://www.google.com/', referrer_at: T0,
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  screen_width: 1920, client_at: T0,
  ref_host: 'google.com', ref_host_at: T0, utm_source: 'newsletter', utm_source_at: T0 + 1, utm_medium: 'email', utm_medium_at: T0,
  utm_campaign: 'Früh\ud800ling', utm_campaign_at: T0 + 2, country: 'DE', country_at: T0,
  seen: ['p/landing', 'p/pricing', 'esignup', 'p/thanks'],
})

/** as LevelDB hands values back: a slice of a larger buffer, at an odd offset */
function pooled(bytes: Uint8Array): Buffer {
  const pool = Buffer.alloc(bytes.length + 11)
  pool.set(bytes, 7)
  return pool.subarray(7, 7 + bytes.length)
}

t.test('round trip: a fresh summary keeps its unset sentinels, a typical one every field', async (t) => {
  for (const s of [fresh(), typical()]) {
    const bytes = encodeSummary(s)
    t.equal(bytes[0], SNAPSHOT_VERSION, 'version byte first')
    t.equal(bytes[1], 5, 'kind: session summary')
    const back = decodeSummary(pooled(bytes))
    t.same(back, s)
    t.equal(back.entry_at, s.entry_at)
    t.equal(back.exit_at, s.exit_at)
    t.same(encodeSummary(back), bytes, 'encoding is deterministic')
  }
  const f = decodeSummary(encodeSummary(fresh()))
  t.equal(f.exit_at, -Infinity, 'the −∞ sentinel')
  t.equal(f.client_at, Infinity, 'the +∞ sentinel')
  t.equal(f.screen_width, null)
})

t.test('much smaller than the JSON it replaces', async (t) => {
  const s = typical()
  const json = JSON.stringify(s, (_k, v) => (v === Infinity || v === -Infinity ? null : v))
  const bytes = encodeSummary(s)
  t.ok(bytes.length < 0.7 * Buffer.byteLength(json), `${bytes.length} bytes against ${Buffer.byteLength(json)} of JSON`)
})

t.test('a binary summary from before attributes were kept decodes with none', async (t) => {
  const s = typical()
  const now = encodeSummary(s)
  const withoutAttributes = { ...s, ref_host: null, utm_source: null, utm_medium: null, utm_campaign: null, country: null }
  const old = encodeSummary(withoutAttributes)
  t.equal(old[old.length - 1], 0, 'no attribute present: the last byte says so')
  const back = decodeSummary(pooled(old.subarray(0, old.length - 1)))
  t.equal(back.ref_host, null)
  t.equal(back.country_at, Infinity)
  t.same(back.seen, s.seen)
  t.same(decodeSummary(now), s, 'and the attributes round-trip when present')
})

t.test('a value stored as JSON before the binary encoding still decodes', async (t) => {
  // written by the JSON encoder this one replaced: ±Infinity as null
  const old = Buffer.from(
    '{"site_id":"shop","session_id":"a","visitor_id":"v1","user_id":null,"first":1795176000000,"last":1795176183000,' +
    '"entry_page":"/landing","entry_at":1795176000000,"exit_page":null,"exit_at":null,"referrer":null,"referrer_at":null,' +
    '"user_agent":null,"screen_width":800,"client_at":1795176000000,"seen":["p/landing","esignup"]}',
  )
  const s = decodeSummary(pooled(old))
  t.equal(s.session_id, 'a')
  t.equal(s.visitor_id, 'v1')
  t.equal(s.exit_at, -Infinity, 'null read back as the unset sentinel')
  t.equal(s.referrer_at, Infinity)
  t.equal(s.screen_width, 800)
  t.same(s.seen, ['p/landing', 'esignup'])
  t.equal(lastOfSummary(old), 1795176183000)
  t.same(decodeSummary(encodeSummary(s)), s, 'and re-encodes in the binary form')
  const bare = decodeSummary(Buffer.from('{"site_id":"x","session_id":"y","first":1,"last":2}'))
  t.same(bare.seen, [], 'a summary from before the seen list has an empty one')
})

t.test('lastOfSummary reads the last time alone', async (t) => {
  t.equal(lastOfSummary(encodeSummary(typical())), T0 + 183_000)
  t.equal(lastOfSummary(pooled(encodeSummary(fresh()))), T0)
})

/** deterministic numbers in [0, 1), hashes of a counter: a failure replays */
function random(seed: number): () => number {
  let i = 0
  return () => hash64(`${seed}:${i++}`).lo / 2 ** 32
}

const ODD_STRINGS = [
  '', 'a', 'é', 'café/ü', '中文路径', '😀 emoji pair', 'lone \ud800 high', 'lone \udfff low', '\udc00\ud800 reversed pair',
  'nul \u0000 inside', '\u007f\u0080 edge', 'x'.repeat(63), 'y'.repeat(64), 'z'.repeat(8191), 'w'.repeat(8192), '€'.repeat(3000),
]
const ODD_NUMBERS = [0, -0, 1, -1, 0.5, 1e-300, Number.MAX_SAFE_INTEGER, -Number.MAX_VALUE, T0, Infinity, -Infinity]

function oddSummary(next: () => number): SessionSummary {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]
  const str = () => pick(ODD_STRINGS)
  const maybe = () => (next() < 0.3 ? null : str())
  const num = () => pick(ODD_NUMBERS)
  const seen: string[] = []
  const n = next() < 0.2 ? 32 : Math.floor(next() * 6)
  for (let i = 0; i < n; i++) seen.push((next() < 0.5 ? 'p' : 'e') + str() + i)
  return {
    site_id: str(), session_id: str(), visitor_id: maybe(), user_id: maybe(), first: num(), last: num(),
    entry_page: maybe(), entry_at: num(), exit_page: maybe(), exit_at: num(), referrer: maybe(), referrer_at: num(),
    user_agent: maybe(), screen_width: next() < 0.3 ? null : num(), client_at: num(), seen,
  }
}

t.test('round trip over odd values: empty and long strings, non-ASCII, lone surrogates, nulls, infinities, 32 seen values', async (t) => {
  const next = random(20261120)
  let failures = 0
  let sawFull = false
  for (let i = 0; i < 2000; i++) {
    const s = oddSummary(next)
    sawFull ||= s.seen.length === 32
    const bytes = encodeSummary(s)
    const back = decodeSummary(pooled(bytes))
    // Object.is tells -0 from 0 and keeps NaN-free infinities exact
    const same = Object.keys(s).every((k) => {
      const a = s[k as keyof SessionSummary]
      const b = back[k as keyof SessionSummary]
      return Array.isArray(a) ? JSON.stringify(a) === JSON.stringify(b) && (a).every((v, j) => v === (b as string[])[j]) : Object.is(a, b)
    })
    if (!same && failures++ < 3) t.fail(`summary ${i} changed in a round trip`, { found: back, wanted: s })
    if (lastOfSummary(bytes) !== s.last && !Object.is(lastOfSummary(bytes), s.last)) t.fail(`summary ${i}: lastOfSummary`)
  }
  t.equal(failures, 0, 'every summary came back unchanged')
  t.ok(sawFull, 'some had a full list of 32 seen values')
})

t.test('each encoding is its own buffer, also after a summary larger than the scratch space', async (t) => {
  const small = encodeSummary(typical())
  const copy = Buffer.from(small)
  const huge = typical()
  huge.seen = Array.from({ length: 32 }, (_, i) => 'p/' + '€'.repeat(2040) + i)
  const hugeBytes = encodeSummary(huge)
  t.ok(hugeBytes.length > 32 * 6000)
  t.same(decodeSummary(hugeBytes), huge)
  const after = encodeSummary(fresh())
  t.same(small, copy, 'an earlier encoding is not overwritten by later ones')
  t.same(decodeSummary(after), fresh())
})

t.test('a view of the encoding holds the same bytes, until the next encoding', async (t) => {
  const view = encodeSummaryView(typical())
  t.same(view, encodeSummary(typical()))
  const copy = Buffer.from(view)
  encodeSummaryView(fresh())
  t.not(view.toString('latin1'), copy.toString('latin1'), 'overwritten by the next one: a consumer must copy it at once')
})

t.test('malformed records are refused with a clear error', async (t) => {
  const bytes = encodeSummary(typical())
  t.throws(() => decodeSummary(bytes.subarray(0, bytes.length - 3)), /session summary: truncated/)
  t.throws(() => decodeSummary(Buffer.concat([bytes, Buffer.from([0])])), /session summary: 1 unexpected trailing bytes/)
  const v2 = Buffer.from(bytes)
  v2[0] = 2
  t.throws(() => decodeSummary(v2), /unsupported version 2/)
  const counter = Buffer.from([SNAPSHOT_VERSION, 1, 0, 0])
  t.throws(() => decodeSummary(counter), /expected a session summary record, found kind 1/)
  const badUtf8 = Buffer.from(encodeSummary(fresh()))
  // the session id "s1": tag 4, then 's', '1'; make its first byte a stray continuation byte
  const at = badUtf8.indexOf(Buffer.from([4, 0x73, 0x31]))
  badUtf8[at + 1] = 0x80
  t.throws(() => decodeSummary(badUtf8), /invalid|encoded data/i, 'malformed UTF-8 is an error, not a replacement character')
})
