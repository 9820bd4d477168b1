import t from 'tap'
import type { LoggedEvent } from '../schema/index.js'
import type { SessionSummary } from '../schema/index.js'
import { MAX_SEEN, pageOf } from './session-summary.js'
import { toConvertedSession } from '../query/index.js'
import { ATTRIBUTES_CHANGED, SEEN_EVENT, SEEN_PAGE, SessionTable } from './session-table.js'
import { referrerHost, summaryAttributes } from './session-attributes.js'
import { hashKey } from '../sketch/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { encodeEvent, readEvent } from '../log/index.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)
const ev = (over: Partial<LoggedEvent>): LoggedEvent =>
  ({ type: 'pageview', site_id: 's', session_id: 'a', ts: T0, received_at: T0, ...over })

const session = [
  ev({ path: '/landing?utm=1', ts: T0, referrer: 'https://google.com/' }),
  ev({ path: '/pricing/', ts: T0 + 60_000, referrer: 'https://bing.com/' }),
  ev({ type: 'custom_event', event_name: 'signup', ts: T0 + 90_000 }),
  ev({ path: '/thanks', ts: T0 + 120_000, user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1' }),
  ev({ type: 'pageleave', ts: T0 + 183_000, visitor_id: 'v1', user_id: 'u1' }),
]

/** folds events of one session as PartitionState.fold does (summary, then the value seen) */
function foldInto(table: SessionTable, hi: number, lo: number, e: LoggedEvent): { slot: number; changed: boolean; sighted: boolean; attributes: boolean; before: (string | null)[] } {
  let slot = table.slotOf(hi, lo)
  if (slot < 0) slot = table.insert(hi, lo, e)
  else table.touch(slot)
  const page = pageOf(e)
  const before = new Array<string | null>(10).fill('untouched')
  const changed = table.fold(slot, e, page, before)
  let sighted = false
  if (page !== null) sighted = table.firstSight(slot, SEEN_PAGE, page)
  else if (e.type === 'custom_event' && e.event_name !== undefined) sighted = table.firstSight(slot, SEEN_EVENT, e.event_name)
  return { slot, changed: changed !== 0, sighted, attributes: (changed & ATTRIBUTES_CHANGED) !== 0, before }
}

function foldAll(events: LoggedEvent[]): SessionSummary {
  const table = new SessionTable()
  let slot = -1
  for (const e of events) slot = foldInto(table, 1, 2, e).slot
  return table.summaryAt(slot)
}

const sorted = (s: SessionSummary) => ({ ...s, seen: [...s.seen].sort() })

t.test('a summary is a join: any order, any repetition, same result', async (t) => {
  const inOrder = foldAll(session)
  t.same(sorted(foldAll([...session].reverse())), sorted(inOrder))
  t.same(foldAll([...session, ...session]), inOrder)
  t.equal(inOrder.entry_page, '/landing')
  t.equal(inOrder.exit_page, '/thanks')
  t.equal(inOrder.referrer, 'https://google.com/', 'the earliest event carrying a referrer')
  t.equal(inOrder.last - inOrder.first, 183_000)
  t.equal(inOrder.visitor_id, 'v1')
  t.equal(inOrder.user_id, 'u1')
  t.same(inOrder.seen, ['p/landing', 'p/pricing', 'esignup', 'p/thanks'])
})

t.test('the client facts of the earliest event carrying them; a session without pageviews has no pages', async (t) => {
  t.equal(toConvertedSession(foldAll([...session].reverse()), T0).device, 'mobile', 'the only user agent, whatever the order')
  const s = foldAll([ev({ type: 'custom_event' }), ev({ type: 'custom_event', event_name: 'x', ts: T0 + 1, screen: { width: 800 } })])
  t.equal(s.entry_page, null)
  t.equal(s.exit_page, null)
  t.equal(s.screen_width, 800)
  t.equal(s.user_agent, null)
  t.equal(foldAll([ev({ ts: T0 + 5, user_agent: 'late', screen: { width: 1 } }), ev({ ts: T0, screen: { width: 2 } })]).user_agent, null, 'an earlier event without a user agent but with a screen wins')
})

t.test('folding an event already folded reports no change and sees nothing new', async (t) => {
  const table = new SessionTable()
  for (const e of session) foldInto(table, 1, 2, e)
  for (const e of session) {
    const { changed, sighted } = foldInto(table, 1, 2, e)
    t.notOk(changed)
    t.notOk(sighted)
  }
})

/*
 * The fold as it was on SessionSummary objects, before the table: the model the table must match
 * field for field, whatever the events.
 */
function modelNew(e: LoggedEvent): SessionSummary {
  return {
    site_id: e.site_id, session_id: e.session_id, visitor_id: null, user_id: null, first: e.ts, last: e.ts,
    entry_page: null, entry_at: Infinity, exit_page: null, exit_at: -Infinity, referrer: null, referrer_at: Infinity,
    user_agent: null, screen_width: null, client_at: Infinity,
    ref_host: null, ref_host_at: Infinity, utm_source: null, utm_source_at: Infinity, utm_medium: null, utm_medium_at: Infinity,
    utm_campaign: null, utm_campaign_at: Infinity, country: null, country_at: Infinity, seen: [],
  }
}

function modelFold(s: SessionSummary, e: LoggedEvent, page: string | null): boolean {
  let changed = false
  const ts = e.ts
  if (ts < s.first) (s.first = ts), (changed = true)
  if (ts > s.last) (s.last = ts), (changed = true)
  if (page !== null) {
    if (ts < s.entry_at || (ts === s.entry_at && s.entry_page !== null && page < s.entry_page)) (s.entry_at = ts), (s.entry_page = page), (changed = true)
    if (ts > s.exit_at || (ts === s.exit_at && s.exit_page !== null && page > s.exit_page)) (s.exit_at = ts), (s.exit_page = page), (changed = true)
  }
  if (e.referrer && (ts < s.referrer_at || (ts === s.referrer_at && s.referrer !== null && e.referrer < s.referrer))) {
    s.referrer_at = ts
    s.referrer = e.referrer
    changed = true
  }
  if ((e.user_agent || e.screen?.width !== undefined) && ts < s.client_at) {
    s.client_at = ts
    s.user_agent = e.user_agent ?? null
    s.screen_width = e.screen?.width ?? null
    changed = true
  }
  // attributes: the earliest event carrying one, ties kept by the first to arrive
  const host = referrerHost(e.referrer, e.hostname, e.url)
  if (host !== null && ts < s.ref_host_at!) (s.ref_host_at = ts), (s.ref_host = host), (changed = true)
  for (const [field, value] of [['utm_source', e.utm?.source], ['utm_medium', e.utm?.medium], ['utm_campaign', e.utm?.campaign], ['country', e.country]] as const) {
    const at = `${field}_at` as const
    if (value && ts < s[at]!) (s[at] = ts), (s[field] = value), (changed = true)
  }
  if (e.visitor_id && s.visitor_id !== e.visitor_id && (s.visitor_id === null || ts >= s.last)) (s.visitor_id = e.visitor_id), (changed = true)
  if (e.user_id && s.user_id !== e.user_id && (s.user_id === null || ts >= s.last)) (s.user_id = e.user_id), (changed = true)
  return changed
}

function modelSight(s: SessionSummary, value: string): boolean {
  if (s.seen.includes(value) || s.seen.length >= MAX_SEEN) return false
  s.seen.push(value)
  return true
}

/** deterministic numbers in [0, 1), hashes of a counter: a failure replays */
function random(seed: number): () => number {
  let i = 0
  return () => hash64(`${seed}:${i++}`).lo / 2 ** 32
}

/** events drawn from small sets, so that equal times and values (the tie-breaks) are frequent */
function randomEvent(next: () => number, sessions: number): LoggedEvent {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]
  const type = pick(['pageview', 'pageview', 'custom_event', 'pageleave'] as const)
  const e: Record<string, unknown> = { type, site_id: pick(['shop', 'blog']), session_id: `s${Math.floor(next() * sessions)}`, ts: T0 + pick([0, 0, 1000, 2000, 3000, 5000, -4000]), received_at: T0 }
  if (type === 'pageview') e.path = pick(['/', '/a', '/b/', '/b', '/c?x=1', '/é', '/lone\ud800'])
  if (type === 'custom_event') e.event_name = pick(['signup', 'buy', '', 'é'])
  if (next() < 0.4) e.referrer = pick(['https://a.example/', 'https://b.example/', '', 'https://WWW.A.example:8080/x', 'https://é.example/', 'https://a.example\ud800/', 'a.example'])
  if (next() < 0.5) e.hostname = pick(['a.example', 'www.a.example', '', 'é.example'])
  if (next() < 0.3) e.url = pick(['https://a.example/p', 'https://b.example/', 'https://\ud800/'])
  if (next() < 0.3) e.user_agent = pick(['UA-1', 'UA-2', ''])
  if (next() < 0.3) e.screen = next() < 0.8 ? { width: pick([320, 1920, 0.5]) } : {}
  if (next() < 0.4) e.visitor_id = pick(['v1', 'v2', '', 'vé', 'v😀', 'v12', 'v'])
  if (next() < 0.2) e.user_id = pick(['u1', 'ü2', '', 'u\ud800'])
  if (next() < 0.5) e.hostname = pick(['a.example', 'www.shop.example'])
  if (next() < 0.3) e.utm = { source: pick(['news', 'ads', '']), ...(next() < 0.5 ? { medium: pick(['email', 'cpc']) } : {}), ...(next() < 0.3 ? { campaign: 'spring' } : {}) }
  if (next() < 0.2) e.country = pick(['DE', 'FR'])
  return e as unknown as LoggedEvent
}

t.test('the table folds exactly as the summary objects did, over random events with many ties, read as records too', async (t) => {
  const next = random(7)
  const table = new SessionTable()
  // the same events as the stream reads them from the log: compared where the record holds them
  const recordTable = new SessionTable()
  const model = new Map<string, SessionSummary>()
  const hashOf = (e: LoggedEvent) => {
    const n = Number(e.session_id.slice(1)) + (e.site_id === 'shop' ? 0 : 1000)
    return { hi: n * 2654435761, lo: ~n }
  }
  let mismatches = 0
  let attributeChanges = 0
  for (let i = 0; i < 20_000; i++) {
    const e = randomEvent(next, 60)
    const { hi, lo } = hashOf(e)
    const key = `${e.site_id}/${e.session_id}`
    let m = model.get(key)
    const isNew = !m
    if (!m) model.set(key, (m = modelNew(e)))
    const page = pageOf(e)
    const wantBefore = summaryAttributes(m)
    const wantChanged = modelFold(m, e, page)
    const wantAttributes = !isNew && JSON.stringify(summaryAttributes(m)) !== JSON.stringify(wantBefore)
    let wantSighted = false
    if (page !== null) wantSighted = modelSight(m, 'p' + page)
    else if (e.type === 'custom_event' && e.event_name !== undefined) wantSighted = modelSight(m, 'e' + e.event_name)
    const got = foldInto(table, hi, lo, e)
    const fromRecord = foldInto(recordTable, hi, lo, readEvent(encodeEvent(e, hi, lo)))
    if (JSON.stringify({ ...fromRecord, slot: 0 }) !== JSON.stringify({ ...got, slot: 0 })) {
      if (mismatches++ < 3) t.fail(`event ${i}: the record folded as ${JSON.stringify(fromRecord)}, the event as ${JSON.stringify(got)}`, { e })
    }
    // (a new slot starts with the event's identities, so its first fold may report less change: it is dirty anyway)
    if ((!isNew && got.changed !== wantChanged) || got.sighted !== wantSighted) {
      if (mismatches++ < 3) t.fail(`event ${i}: changed ${got.changed} (model ${wantChanged}), sighted ${got.sighted} (model ${wantSighted})`, { e })
    }
    // a field the attributes derive from may change while they do not (two user agents of one device): the fold may say so, the caller compares
    if (!isNew && ((wantAttributes && !got.attributes) || (got.attributes && JSON.stringify(got.before) !== JSON.stringify(wantBefore)))) {
      if (mismatches++ < 3) t.fail(`event ${i}: attributes changed ${got.attributes} (model ${wantAttributes}), before ${JSON.stringify(got.before)} (model ${JSON.stringify(wantBefore)})`, { e })
    }
    if (wantAttributes) attributeChanges++
  }
  t.equal(mismatches, 0, 'every fold reported what the model did')
  t.ok(attributeChanges > 100, `attributes changed ${attributeChanges} times`)
  t.equal(table.size, model.size)
  let differ = 0
  for (const [key, m] of model) {
    const [site, id] = key.split('/') as [string, string]
    const { hi, lo } = hashOf({ site_id: site, session_id: id } as LoggedEvent)
    for (const tb of [table, recordTable]) {
      const s = tb.summaryAt(tb.slotOf(hi, lo))
      if (JSON.stringify(s) !== JSON.stringify(m) || !Object.is(s.entry_at, m.entry_at) || !Object.is(s.exit_at, m.exit_at)) {
        if (differ++ < 3) t.same(s, m, `${key}${tb === recordTable ? ' (records)' : ''}`)
      }
    }
  }
  t.equal(differ, 0, 'every summary equals the model')
  t.ok([...model.values()].some((m) => m.seen.length > 3 && m.visitor_id !== null && m.user_agent === ''), 'the events covered long seen lists and empty strings')
  const ids = [...model.values()].flatMap((m) => [m.visitor_id, m.user_id])
  t.ok(['v1', 'vé', 'v😀', 'ü2', 'u\ud800'].every((id) => ids.includes(id)), 'identities of ASCII, Latin-1, beyond it and a lone surrogate won')
})

t.test('a seen list holds at most 32 values', async (t) => {
  const table = new SessionTable()
  const slot = table.insert(1, 1, ev({}))
  for (let i = 0; i < MAX_SEEN; i++) t.ok(table.firstSight(slot, SEEN_PAGE, `/p${i}`)) || t.bailout()
  t.notOk(table.firstSight(slot, SEEN_PAGE, '/one-more'), 'full')
  t.notOk(table.firstSight(slot, SEEN_PAGE, '/p0'), 'and seen')
  t.equal(table.summaryAt(slot).seen.length, MAX_SEEN)
  t.equal(table.summaryAt(slot).seen[31], 'p/p31', 'in the order seen')
})

const summary = (over: Partial<SessionSummary>): SessionSummary => ({
  site_id: 'shop', session_id: 'stored', visitor_id: 'v9', user_id: null, first: T0, last: T0 + 5000,
  entry_page: '/in', entry_at: T0, exit_page: '/out', exit_at: T0 + 5000, referrer: null, referrer_at: Infinity,
  user_agent: 'UA', screen_width: 390, client_at: T0, ref_host: 'news.example', ref_host_at: T0 + 1000, utm_source: 'letter', utm_source_at: T0,
  utm_medium: null, utm_medium_at: Infinity, utm_campaign: null, utm_campaign_at: Infinity, country: 'NL', country_at: T0,
  seen: ['p/in', 'p/out', 'ebuy', 'raw value'], ...over,
})

t.test('a stored summary loads, reads back, folds on, and replaces what a slot held', async (t) => {
  const table = new SessionTable()
  const stored = summary({})
  const hk = hashKey(0xdeadbeef, 7)
  table.set(hk, stored)
  t.ok(table.has(hk))
  t.same(table.get(hk), stored, 'read back as it was, an unprefixed seen value included')
  t.notOk(table.isDirty(table.slotOf(0xdeadbeef, 7)), 'a loaded summary is clean')
  const slot = table.slotOf(0xdeadbeef, 7)
  t.notOk(table.firstSight(slot, SEEN_EVENT, 'buy'), 'its seen values count as seen')
  t.ok(table.firstSight(slot, SEEN_PAGE, 'buy'), 'a page and an event of the same name are different values')
  table.fold(slot, ev({ ts: T0 + 9000, path: '/later' }), '/later')
  t.equal(table.get(hk)!.exit_page, '/later')
  table.set(hk, summary({ session_id: 'other', seen: [] }))
  t.same(table.get(hk), summary({ session_id: 'other', seen: [] }), 'replaced')
  t.equal(table.size, 1)
  t.equal(table.get(hashKey(1, 1)), undefined)
  table.clear()
  t.equal(table.size, 0)
  t.equal(table.pool.size, 0, 'every pooled string was released')
})

t.test('eviction: least recently used clean summaries leave, dirty and written ones stay', async (t) => {
  const table = new SessionTable()
  const slots = Array.from({ length: 10 }, (_, i) => table.insert(i, i, ev({ session_id: `s${i}`, ts: T0 + i })))
  table.touch(slots[0]) // now the most recently used
  table.markDirty(slots[1])
  table.markDirty(slots[2])
  const taken = table.takeDirty()
  t.same([...taken].sort(), [slots[1], slots[2]], 'the dirty slots')
  table.markDirty(slots[3])
  t.notOk(table.isDirty(slots[1]), 'taken: clean, but being written')
  t.equal(table.evictOver(5), 0)
  const left = [...table.keys()]
  t.same(left, [1, 2, 3, 9, 0].map((i) => hashKey(i, i)), 'the oldest clean ones went; written and dirty stayed; order kept')
  table.restore(taken)
  t.ok(table.isDirty(slots[1]), 'a failed snapshot leaves its slots dirty')
  table.written(table.takeDirty())
  t.equal(table.evictOver(0), 0, 'all clean now: all may go')
  t.equal(table.size, 0)
  t.equal(table.pool.size, 0)
})

t.test('ids over the slab limit live and leave with their session', async (t) => {
  const table = new SessionTable()
  const long = 'é'.repeat(9000)
  const slot = table.insert(3, 3, ev({ visitor_id: long }))
  t.equal(table.summaryAt(slot).visitor_id, long)
  const held = table.memoryBytes()
  t.equal(table.evictOver(0), 0)
  t.ok(held - table.memoryBytes() >= 2 * long.length, 'released with the session')
})

t.test('eviction of idle sessions by processing time, not event time', async (t) => {
  const table = new SessionTable()
  // events of last month, folded one a second: their age is not their idleness
  for (let i = 0; i < 10; i++) {
    table.clock = T0 + i * 1000
    table.insert(i, i, ev({ session_id: `s${i}`, ts: T0 - 30 * 86_400_000 + i }))
  }
  t.equal(table.evictIdle(T0 - 1000), 0, 'nothing was used before the cutoff, however old its events')
  table.markDirty(table.slotOf(2, 2))
  t.equal(table.evictIdle(T0 + 5000), 4, 'sessions 0, 1, 3, 4 (2 is dirty)')
  t.same([...table.keys()], [2, 5, 6, 7, 8, 9].map((i) => hashKey(i, i)))
  t.equal(table.evictOver(100), 0, 'under the cap: nothing to do')
  // a session used again moves to the end of the list with the new time
  table.clock = T0 + 20_000
  table.touch(table.slotOf(5, 5))
  t.equal(table.evictIdle(T0 + 10_000), 4, 'sessions 6 to 9; 5 was used since')
  t.ok(table.has(hashKey(5, 5)))
  // the walk stops at the first clean active session: one used before it waits its turn
  table.clock = T0
  table.insert(20, 20, ev({ session_id: 's20', ts: T0 }))
  t.equal(table.evictIdle(T0 + 5000), 0, 'stopped at session 5')
  t.ok(table.has(hashKey(20, 20)))
  t.equal(table.evictIdle(T0 + 30_000), 2, 'once the sessions before it are idle too, it goes with them')
})

t.test('many sessions: growth and deletions keep every lookup right', async (t) => {
  const table = new SessionTable()
  const next = random(11)
  /** hash key → [hi, lo, last event time] of every session that should be hot */
  const live = new Map<string, [number, number, number]>()
  let wrong = 0
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 8000; i++) {
      const hi = (next() * 2 ** 32) | 0
      // a third of the keys share their low half: the index must still spread them
      const lo = i % 3 === 0 ? 5 : (next() * 2 ** 32) | 0
      const e = ev({ session_id: `r${round}-${i}`, ts: T0 + round * 10_000 + i })
      table.clock = e.ts
      const slot = table.slotOf(hi, lo)
      if (slot < 0) table.insert(hi, lo, e)
      else (table.touch(slot), table.fold(slot, e, null))
      live.set(hashKey(hi, lo), [hi, lo, e.ts])
    }
    // sessions of the round before last leave
    const cutoff = T0 + (round - 1) * 10_000
    table.evictIdle(cutoff)
    for (const [hk, [hi, lo, last]] of live) {
      const s = table.slotOf(hi, lo)
      if (last < cutoff) {
        if (s >= 0) wrong++
        live.delete(hk)
      } else if (s < 0 || table.last(s) !== last || !table.has(hk)) wrong++
    }
    t.equal(table.size, live.size, `round ${round}: ${live.size} hot`)
  }
  t.equal(wrong, 0, 'nothing idle left, nothing live lost')
  t.ok(table.memoryBytes() / table.size < 400, `${(table.memoryBytes() / table.size).toFixed(0)} bytes a session`)
})
