import type { LoggedEvent } from '../schema/index.js'
import { EventRecord } from '../log/index.js'
import type { SessionSummary } from '../schema/index.js'
import { MAX_SEEN } from './session-summary.js'
import { StringPool } from './string-pool.js'
import { ByteSlabs } from './byte-slabs.js'
import { SessionIds, SESSION_ID, USER_ID, VISITOR_ID, type IdField } from './session-ids.js'
import { hashHi, hashKey, hashLo } from '../sketch/index.js'
import { dayOf } from '../goals/index.js'
import {
  CLIENT_AT, COUNTED_DAY, COUNTED_HOUR, COUNTRY, COUNTRY_AT, ENTRY, ENTRY_AT, EXIT, EXIT_AT, FIRST, HI, IDS, INTS, LAST, LO, META,
  REF_HOST, REF_HOST_AT, REFERRER, REFERRER_AT, SCREEN, SEEN, SessionSlots, SITE, USED, USER_AGENT, UTM_CAMPAIGN, UTM_CAMPAIGN_AT,
  UTM_MEDIUM, UTM_MEDIUM_AT, UTM_SOURCE, UTM_SOURCE_AT,
} from './session-slots.js'
import { attributesInto, referrerHost, referrerIsOwn } from './session-attributes.js'

const DIRTY = 1
const WRITING = 2
const SEEN_SHIFT = 8
const NONE = -1

/** what a seen value is: a page, an event name, or (from a stored summary) anything else */
export const SEEN_PAGE = 0
export const SEEN_EVENT = 1
const SEEN_RAW = 2
export type SeenKind = typeof SEEN_PAGE | typeof SEEN_EVENT
const PREFIX = ['p', 'e', ''] as const

/** string pool cache channels: one per kind of value, so that they do not evict each other */
const SITES = 0
const PAGES = 1
const REFERRERS = 2
const USER_AGENTS = 3
const EVENT_NAMES = 4
const UTMS = 5
const COUNTRIES = 6
/** the channel of each string field */
const CHANNEL_OF = new Int8Array(INTS)
CHANNEL_OF[SITE] = SITES
CHANNEL_OF[ENTRY] = PAGES
CHANNEL_OF[EXIT] = PAGES
CHANNEL_OF[REFERRER] = REFERRERS
CHANNEL_OF[USER_AGENT] = USER_AGENTS
CHANNEL_OF[REF_HOST] = REFERRERS
CHANNEL_OF[UTM_SOURCE] = UTMS
CHANNEL_OF[UTM_MEDIUM] = UTMS
CHANNEL_OF[UTM_CAMPAIGN] = UTMS
CHANNEL_OF[COUNTRY] = COUNTRIES
/** the attributes' string fields and the float fields of their times, side by side */
const ATTRIBUTE_STRINGS = [REF_HOST, UTM_SOURCE, UTM_MEDIUM, UTM_CAMPAIGN, COUNTRY] as const

/** `fold`'s answer: bit 0 the summary changed, bit 1 one of its attributes did */
export const CHANGED = 1
export const ATTRIBUTES_CHANGED = 2

/**
 * The hot session summaries of one partition, compact: one slot per session in two typed arrays
 * (its times in a Float64Array, ids and links in an Int32Array), strings shared by many sessions
 * interned in a reference-counted pool, the per-session ids and seen lists in byte slabs, an
 * open-addressing index from the 64-bit session hash to the slot, and a doubly linked list in
 * least-recently-used order. Nothing here is an object per session, so the old generation does
 * not grow by an object graph per new session (~800 B and ~6 objects as a Map of summaries,
 * ~200 B and none here; bench/hot-sessions.mjs) and full GCs do not slow down with the sessions.
 *
 * The fold is the join session-summary.ts describes: every field a min or max by event time with
 * ties broken by value, so replays and any order of the same events give the same summary.
 * Summaries leave as SessionSummary objects (queries, snapshots) and come back as such (reads of
 * cold sessions from the store).
 *
 * A slot is dirty from a change until a snapshot takes it, and being written while that snapshot
 * runs: neither may be evicted, since the store does not hold its latest state yet.
 */
export class SessionTable {
  readonly #slots = new SessionSlots()
  #dirty: Int32Array = new Int32Array(256)
  #dirtyCount = 0
  readonly #pool = new StringPool()
  readonly #ids = new SessionIds()
  readonly #seen = new ByteSlabs()
  /** scratch for attributeAt */
  readonly #one = new Array<string | null>(10).fill(null)

  get size(): number {
    return this.#slots.size
  }

  /** sessions changed since a snapshot last took them */
  get dirtyCount(): number {
    return this.#dirtyCount
  }

  /** told of every session that leaves memory (its summary stays in the store) */
  onLeave: ((hi: number, lo: number) => void) | undefined
  /** told of every session loaded from the store or leaving memory */
  onPassage: ((hi: number, lo: number) => void) | undefined

  /**
   * The processing time (epoch ms) stamped on sessions as they are folded or loaded from now on:
   * the fold sets it once per batch, and idle eviction compares against it.
   */
  set clock(ms: number) {
    this.#slots.now = ms
  }

  /** The slot of a session hash, or -1. */
  slotOf(hi: number, lo: number): number {
    return this.#slots.find(hi, lo)
  }

  /** A new session's slot (the caller knows it is absent), most recently used, clean. */
  insert(hi: number, lo: number, e: LoggedEvent): number {
    const s = this.#alloc(hi, lo)
    const F = this.#slots.floatsOf(s)
    const f = this.#slots.floatAt(s)
    F[f + FIRST] = e.ts
    F[f + LAST] = e.ts
    F[f + ENTRY_AT] = Infinity
    F[f + EXIT_AT] = -Infinity
    F[f + REFERRER_AT] = Infinity
    F[f + CLIENT_AT] = Infinity
    F[f + SCREEN] = NaN
    F[f + REF_HOST_AT] = F[f + UTM_SOURCE_AT] = F[f + UTM_MEDIUM_AT] = F[f + UTM_CAMPAIGN_AT] = F[f + COUNTRY_AT] = Infinity
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    I[o + SITE] = this.#pool.acquire(e.site_id, SITES)
    // what folding this first event into null identities would set
    I[o + IDS] = this.#ids.put(e.session_id, e.visitor_id || null, e.user_id || null)
    return s
  }

  /**
   * Notes that the session is counted in `hour` (an `hourKey`); false when it was already the
   * last hour it was counted in. Held in memory only: after a restore the session is counted
   * again, which the counters (sets) absorb.
   */
  countsInHour(s: number, hour: number): boolean {
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    if (I[o + COUNTED_HOUR] === hour) return false
    I[o + COUNTED_HOUR] = hour
    return true
  }

  /**
   * The day (a day number) the session's attributes were last counted in, 0 for none; held in
   * memory only, like `countsInHour`.
   */
  countedDay(s: number): number {
    return this.#slots.intsOf(s)[this.#slots.intAt(s) + COUNTED_DAY]
  }

  setCountedDay(s: number, day: number): void {
    this.#slots.intsOf(s)[this.#slots.intAt(s) + COUNTED_DAY] = day
  }

  /** marks a slot the most recently used */
  touch(s: number): void {
    this.#slots.touch(s)
  }

  /** The session's value of every breakdown dimension (session-attributes.ts), into `out`. */
  attributes(s: number, out: (string | null)[]): (string | null)[] {
    const F = this.#slots.floatsOf(s)
    const I = this.#slots.intsOf(s)
    const f = this.#slots.floatAt(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    const screen = F[f + SCREEN]
    return attributesInto(
      pool.get(I[o + ENTRY]), pool.get(I[o + REF_HOST]), pool.get(I[o + UTM_SOURCE]), pool.get(I[o + UTM_MEDIUM]), pool.get(I[o + UTM_CAMPAIGN]),
      pool.get(I[o + USER_AGENT]), Number.isNaN(screen) ? null : screen, pool.get(I[o + COUNTRY]), out,
    )
  }

  /** The session's value of one dimension (its index in BREAKDOWN_DIMENSIONS): `attributes` for one. */
  attributeAt(s: number, d: number): string | null {
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    switch (d) {
      case 0: return pool.get(I[o + UTM_SOURCE]) ?? pool.get(I[o + REF_HOST])
      case 1: return pool.get(I[o + REF_HOST])
      case 2: return pool.get(I[o + UTM_SOURCE])
      case 3: return pool.get(I[o + UTM_MEDIUM])
      case 4: return pool.get(I[o + UTM_CAMPAIGN])
      case 5: return pool.get(I[o + ENTRY])
      case 9: return pool.get(I[o + COUNTRY])
      default: return this.attributes(s, this.#one)[d]
    }
  }

  /**
   * Folds one event into a slot: CHANGED when anything changed, with ATTRIBUTES_CHANGED when a field
   * the session's attributes derive from did (they may have stayed the same: compare); then, if
   * `before` is given, it holds the attributes as they were.
   * `page` is the event's normalized path when it is a pageview, else null. Each field is a join
   * (see the class comment).
   */
  fold(s: number, e: LoggedEvent, page: string | null, before: (string | null)[] | null = null): number {
    const F = this.#slots.floatsOf(s)
    const I = this.#slots.intsOf(s)
    const f = this.#slots.floatAt(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    const ts = e.ts
    let changed = 0
    if (ts < F[f + FIRST]) (F[f + FIRST] = ts), (changed |= CHANGED)
    if (ts > F[f + LAST]) (F[f + LAST] = ts), (changed |= CHANGED)
    if (page !== null) {
      const entryAt = F[f + ENTRY_AT]
      // ties by value keep the result independent of arrival order
      if (ts < entryAt || (ts === entryAt && I[o + ENTRY] !== 0 && page < pool.get(I[o + ENTRY])!)) {
        if (I[o + ENTRY] === 0 || pool.get(I[o + ENTRY]) !== page) changed = this.#attributeChanges(s, changed, before)
        F[f + ENTRY_AT] = ts
        this.#setString(I, o, ENTRY, page)
        changed |= CHANGED
      }
      const exitAt = F[f + EXIT_AT]
      if (ts > exitAt || (ts === exitAt && I[o + EXIT] !== 0 && page > pool.get(I[o + EXIT])!)) {
        F[f + EXIT_AT] = ts
        this.#setString(I, o, EXIT, page)
        changed |= CHANGED
      }
    }
    // times first: a record's fields are decoded when first read (log/event-record.ts); a referrer
    // that may only set the source's host is looked at where the record holds it first
    const ownHost = ts > F[f + REFERRER_AT] && ts < F[f + REF_HOST_AT] && e instanceof EventRecord ? referrerOfOwnHost(e) : undefined
    const referrer = ownHost !== true && (ts <= F[f + REFERRER_AT] || ts < F[f + REF_HOST_AT]) ? e.referrer : undefined
    if (referrer) {
      const at = F[f + REFERRER_AT]
      if (ts < at || (ts === at && I[o + REFERRER] !== 0 && referrer < pool.get(I[o + REFERRER])!)) {
        F[f + REFERRER_AT] = ts
        this.#setString(I, o, REFERRER, referrer)
        changed |= CHANGED
      }
      // the breakdown's referrer: the earliest from another host; ties keep the first to arrive
      if (ts < F[f + REF_HOST_AT]) {
        // the url only when there is no hostname: reading a field of a record decodes it
        const hostname = e.hostname
        const host = referrerHost(referrer, hostname, hostname ? undefined : e.url)
        if (host !== null) {
          if (pool.get(I[o + REF_HOST]) !== host) changed = this.#attributeChanges(s, changed, before)
          F[f + REF_HOST_AT] = ts
          this.#setString(I, o, REF_HOST, host)
          changed |= CHANGED
        }
      }
    }
    // the earliest event's client facts win
    if (ts < F[f + CLIENT_AT]) {
      const width = screenWidthOf(e)
      if (e.user_agent || width !== undefined) {
        const agent = e.user_agent ?? null
        if (pool.get(I[o + USER_AGENT]) !== agent || !Object.is(F[f + SCREEN], width ?? NaN)) changed = this.#attributeChanges(s, changed, before)
        F[f + CLIENT_AT] = ts
        this.#setString(I, o, USER_AGENT, agent)
        F[f + SCREEN] = width ?? NaN
        changed |= CHANGED
      }
    }
    // read only while a field of it may still be set: an object of strings for a record
    const utm = ts < F[f + UTM_SOURCE_AT] || ts < F[f + UTM_MEDIUM_AT] || ts < F[f + UTM_CAMPAIGN_AT] ? e.utm : undefined
    if (utm !== undefined) {
      if (utm.source && ts < F[f + UTM_SOURCE_AT]) changed = this.#attribute(s, F, I, f, o, UTM_SOURCE_AT, UTM_SOURCE, utm.source, ts, changed, before)
      if (utm.medium && ts < F[f + UTM_MEDIUM_AT]) changed = this.#attribute(s, F, I, f, o, UTM_MEDIUM_AT, UTM_MEDIUM, utm.medium, ts, changed, before)
      if (utm.campaign && ts < F[f + UTM_CAMPAIGN_AT]) changed = this.#attribute(s, F, I, f, o, UTM_CAMPAIGN_AT, UTM_CAMPAIGN, utm.campaign, ts, changed, before)
    }
    if (ts < F[f + COUNTRY_AT] && e.country) changed = this.#attribute(s, F, I, f, o, COUNTRY_AT, COUNTRY, e.country, ts, changed, before)
    // identities: the latest one known wins, like the browser client's "later events carry user_id"
    if (this.#identityOf(e, I, o, VISITOR_ID, 'visitor_id', ts >= F[f + LAST])) changed |= CHANGED
    if (this.#identityOf(e, I, o, USER_ID, 'user_id', ts >= F[f + LAST])) changed |= CHANGED
    return changed
  }

  /** Sets an attribute (string `field`, time `at`) from an earlier event; returns `changed` updated. */
  #attribute(
    s: number, F: Float64Array, I: Int32Array, f: number, o: number, at: number, field: number, value: string, ts: number,
    changed: number, before: (string | null)[] | null,
  ): number {
    if (this.#pool.get(I[o + field]) !== value) changed = this.#attributeChanges(s, changed, before)
    F[f + at] = ts
    this.#setString(I, o, field, value)
    return changed | CHANGED
  }

  /** called before an attribute changes: the first call of a fold keeps the old ones in `before` */
  #attributeChanges(s: number, changed: number, before: (string | null)[] | null): number {
    if ((changed & ATTRIBUTES_CHANGED) === 0 && before !== null) this.attributes(s, before)
    return changed | CHANGED | ATTRIBUTES_CHANGED
  }

  /**
   * Marks a suggestion value as counted for this session; false when it already was (or the
   * session's list is full), so a value counts once per session.
   */
  firstSight(s: number, kind: SeenKind, value: string): boolean {
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    const n = I[o + META] >>> SEEN_SHIFT
    if (n >= MAX_SEEN) return false
    const channel = kind === SEEN_PAGE ? PAGES : EVENT_NAMES
    if (n > 0) {
      const id = this.#pool.find(value, channel)
      if (id !== 0) {
        const entry = (id << 2) | kind
        const ref = I[o + SEEN]
        const words = this.#seen.words(ref)
        const w = this.#seen.offset(ref) >> 2
        for (let k = 0; k < n; k++) if (words[w + k] === entry) return false
      }
    }
    this.#pushSeen(s, (this.#pool.acquire(value, channel) << 2) | kind)
    return true
  }

  first(s: number): number {
    return this.#slots.floatsOf(s)[this.#slots.floatAt(s) + FIRST]
  }

  /**
   * The local days of the session's first and last events, into `span`: what the fold asks, without
   * handing it the times (a time returned from a call is a number object made for it).
   */
  spanDays(s: number, timezone: string, span: [number, number]): [number, number] {
    const F = this.#slots.floatsOf(s)
    const f = this.#slots.floatAt(s)
    span[0] = dayOf(F[f + FIRST], timezone)
    span[1] = dayOf(F[f + LAST], timezone)
    return span
  }

  last(s: number): number {
    return this.#slots.floatsOf(s)[this.#slots.floatAt(s) + LAST]
  }

  /** the session hash's halves (int32) */
  hiAt(s: number): number {
    return this.#slots.intsOf(s)[this.#slots.intAt(s) + HI]
  }

  loAt(s: number): number {
    return this.#slots.intsOf(s)[this.#slots.intAt(s) + LO]
  }

  markDirty(s: number): void {
    const I = this.#slots.intsOf(s)
    const m = this.#slots.intAt(s) + META
    if (I[m] & DIRTY) return
    I[m] |= DIRTY
    if (this.#dirtyCount === this.#dirty.length) {
      const dirty = new Int32Array(2 * this.#dirty.length)
      dirty.set(this.#dirty)
      this.#dirty = dirty
    }
    this.#dirty[this.#dirtyCount++] = s
  }

  isDirty(s: number): boolean {
    return (this.#meta(s) & DIRTY) !== 0
  }

  /** The dirty slots, now clean and being written until `written` (or dirty again by `restore`). */
  takeDirty(): Int32Array {
    const out = this.#dirty.slice(0, this.#dirtyCount)
    for (const s of out) this.#setMeta(s, (this.#meta(s) & ~DIRTY) | WRITING)
    this.#dirtyCount = 0
    return out
  }

  /** the slots of a snapshot that is over: they may leave memory again */
  written(slots: Int32Array): void {
    for (const s of slots) this.#setMeta(s, this.#meta(s) & ~WRITING)
  }

  /** the slots of a snapshot that failed: dirty again (unless `clear` emptied them meanwhile) */
  restore(slots: Int32Array): void {
    for (const s of slots) if (this.#meta(s) & USED) this.markDirty(s)
  }

  /** A slot's summary as an object (for queries and the store). */
  summaryAt(s: number): SessionSummary {
    const F = this.#slots.floatsOf(s)
    const I = this.#slots.intsOf(s)
    const f = this.#slots.floatAt(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    const ids = I[o + IDS]
    const screen = F[f + SCREEN]
    const seen: string[] = []
    const n = I[o + META] >>> SEEN_SHIFT
    if (n > 0) {
      const ref = I[o + SEEN]
      const words = this.#seen.words(ref)
      const w = this.#seen.offset(ref) >> 2
      for (let k = 0; k < n; k++) {
        const entry = words[w + k]
        seen.push(PREFIX[entry & 3] + pool.get(entry >>> 2)!)
      }
    }
    return {
      site_id: pool.get(I[o + SITE])!,
      session_id: this.#ids.get(ids, SESSION_ID)!,
      visitor_id: this.#ids.get(ids, VISITOR_ID),
      user_id: this.#ids.get(ids, USER_ID),
      first: F[f + FIRST],
      last: F[f + LAST],
      entry_page: pool.get(I[o + ENTRY]),
      entry_at: F[f + ENTRY_AT],
      exit_page: pool.get(I[o + EXIT]),
      exit_at: F[f + EXIT_AT],
      referrer: pool.get(I[o + REFERRER]),
      referrer_at: F[f + REFERRER_AT],
      user_agent: pool.get(I[o + USER_AGENT]),
      screen_width: Number.isNaN(screen) ? null : screen,
      client_at: F[f + CLIENT_AT],
      ref_host: pool.get(I[o + REF_HOST]),
      ref_host_at: F[f + REF_HOST_AT],
      utm_source: pool.get(I[o + UTM_SOURCE]),
      utm_source_at: F[f + UTM_SOURCE_AT],
      utm_medium: pool.get(I[o + UTM_MEDIUM]),
      utm_medium_at: F[f + UTM_MEDIUM_AT],
      utm_campaign: pool.get(I[o + UTM_CAMPAIGN]),
      utm_campaign_at: F[f + UTM_CAMPAIGN_AT],
      country: pool.get(I[o + COUNTRY]),
      country_at: F[f + COUNTRY_AT],
      seen,
    }
  }

  /**
   * Puts a summary read from the store (clean, most recently used), replacing what the slot held.
   * Returns the slot.
   */
  load(hi: number, lo: number, summary: SessionSummary): number {
    this.onPassage?.(hi, lo)
    let s = this.slotOf(hi, lo)
    if (s === NONE) s = this.#alloc(hi, lo)
    else {
      this.#releaseContent(s)
      this.touch(s)
    }
    const F = this.#slots.floatsOf(s)
    const I = this.#slots.intsOf(s)
    const f = this.#slots.floatAt(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    F[f + FIRST] = summary.first
    F[f + LAST] = summary.last
    F[f + ENTRY_AT] = summary.entry_at
    F[f + EXIT_AT] = summary.exit_at
    F[f + REFERRER_AT] = summary.referrer_at
    F[f + CLIENT_AT] = summary.client_at
    F[f + SCREEN] = summary.screen_width ?? NaN
    F[f + REF_HOST_AT] = summary.ref_host_at ?? Infinity
    F[f + UTM_SOURCE_AT] = summary.utm_source_at ?? Infinity
    F[f + UTM_MEDIUM_AT] = summary.utm_medium_at ?? Infinity
    F[f + UTM_CAMPAIGN_AT] = summary.utm_campaign_at ?? Infinity
    F[f + COUNTRY_AT] = summary.country_at ?? Infinity
    // (`== null`: a summary stored as JSON by an older build may lack a field)
    I[o + SITE] = pool.acquire(summary.site_id, SITES)
    I[o + ENTRY] = summary.entry_page == null ? 0 : pool.acquire(summary.entry_page, PAGES)
    I[o + EXIT] = summary.exit_page == null ? 0 : pool.acquire(summary.exit_page, PAGES)
    I[o + REFERRER] = summary.referrer == null ? 0 : pool.acquire(summary.referrer, REFERRERS)
    I[o + USER_AGENT] = summary.user_agent == null ? 0 : pool.acquire(summary.user_agent, USER_AGENTS)
    I[o + REF_HOST] = summary.ref_host == null ? 0 : pool.acquire(summary.ref_host, REFERRERS)
    I[o + UTM_SOURCE] = summary.utm_source == null ? 0 : pool.acquire(summary.utm_source, UTMS)
    I[o + UTM_MEDIUM] = summary.utm_medium == null ? 0 : pool.acquire(summary.utm_medium, UTMS)
    I[o + UTM_CAMPAIGN] = summary.utm_campaign == null ? 0 : pool.acquire(summary.utm_campaign, UTMS)
    I[o + COUNTRY] = summary.country == null ? 0 : pool.acquire(summary.country, COUNTRIES)
    I[o + IDS] = this.#ids.put(summary.session_id, summary.visitor_id ?? null, summary.user_id ?? null)
    for (const v of summary.seen.slice(0, MAX_SEEN)) {
      const kind = v[0] === 'p' ? SEEN_PAGE : v[0] === 'e' ? SEEN_EVENT : SEEN_RAW
      this.#pushSeen(s, (pool.acquire(kind === SEEN_RAW ? v : v.slice(1), kind === SEEN_PAGE ? PAGES : EVENT_NAMES) << 2) | kind)
    }
    return s
  }

  /**
   * Forgets the least recently used clean summaries until at most `max` are held (the store keeps
   * them); dirty ones wait for the next snapshot. Returns how many are still over the cap.
   */
  evictOver(max: number): number {
    let over = this.size - max
    for (let s = this.#slots.head; s !== NONE && over > 0; ) {
      const next = this.#slots.next(s)
      if ((this.#meta(s) & (DIRTY | WRITING)) === 0) {
        this.#remove(s)
        over--
      }
      s = next
    }
    return Math.max(0, over)
  }

  /**
   * Forgets clean summaries of sessions not folded since before `cutoff`, in processing time (they
   * stay in the store), from the least recently used on, up to the first clean one used since:
   * the list is in order of use, so the rest is newer still. Walking all of it after every snapshot
   * took 30 ms at 125 k sessions.
   */
  evictIdle(cutoff: number): number {
    let n = 0
    for (let s = this.#slots.head; s !== NONE; ) {
      const next = this.#slots.next(s)
      if ((this.#meta(s) & (DIRTY | WRITING)) === 0) {
        if (this.#slots.usedAt(s) >= cutoff) break
        this.#remove(s)
        n++
      }
      s = next
    }
    return n
  }

  // A Map-like face keyed by hash keys (partition-state.ts hashKey), for the store's reads and tests.

  has(hk: string): boolean {
    return this.slotOf(hashHi(hk), hashLo(hk)) !== NONE
  }

  get(hk: string): SessionSummary | undefined {
    const s = this.slotOf(hashHi(hk), hashLo(hk))
    return s === NONE ? undefined : this.summaryAt(s)
  }

  set(hk: string, summary: SessionSummary): this {
    this.load(hashHi(hk), hashLo(hk), summary)
    return this
  }

  /** hash keys, least recently used first */
  *keys(): IterableIterator<string> {
    for (let s = this.#slots.head; s !== NONE; s = this.#slots.next(s)) yield hashKey(this.hiAt(s), this.loAt(s))
  }

  /** Forgets every summary, dirty or not. */
  clear(): void {
    for (let s = this.#slots.head; s !== NONE; ) {
      const next = this.#slots.next(s)
      this.#remove(s)
      s = next
    }
    this.#dirtyCount = 0
  }

  /** bytes held: the slot arrays, the index, the pool, the slabs */
  memoryBytes(): number {
    return this.#slots.memoryBytes() + this.#dirty.byteLength + this.#pool.memoryBytes() + this.#ids.memoryBytes() + this.#seen.memoryBytes()
  }

  /** the string pool (for tests: references must balance) */
  get pool(): StringPool {
    return this.#pool
  }

  #meta(s: number): number {
    return this.#slots.intsOf(s)[this.#slots.intAt(s) + META]
  }

  #setMeta(s: number, meta: number): void {
    this.#slots.intsOf(s)[this.#slots.intAt(s) + META] = meta
  }

  /**
   * Folds the event's identity `name` into the session's (#identityWins). Most events repeat the
   * session's: a record's text is compared where it lies, and made a string only when it wins.
   */
  #identityOf(e: LoggedEvent, I: Int32Array, o: number, field: IdField, name: 'visitor_id' | 'user_id', latest: boolean): boolean {
    if (e instanceof EventRecord) {
      const from = e.textFrom(name)
      if (from === -1) return false
      const n = from >= 0 ? e.textLength(from) : -1
      // an empty identity is none, as the string's test below has it
      if (n === 0) return false
      const same = n > 0 ? this.#ids.equalsAscii(I[o + IDS], field, e.bytes, from, n) : undefined
      if (same === true || (same === false && !latest && !this.#ids.isNull(I[o + IDS], field))) return false
      if (same === false) {
        I[o + IDS] = this.#ids.with(I[o + IDS], field, e[name]!)
        return true
      }
    }
    const value = e[name]
    return value ? this.#identityWins(I, o, field, value, latest) : false
  }

  /** `I`, `o`: the slot's page of int32 fields and its offset there */
  #identityWins(I: Int32Array, o: number, field: IdField, value: string, latest: boolean): boolean {
    const ref = I[o + IDS]
    if (this.#ids.equals(ref, field, value)) return false
    if (!latest && !this.#ids.isNull(ref, field)) return false
    I[o + IDS] = this.#ids.with(ref, field, value)
    return true
  }

  #setString(I: Int32Array, o: number, field: number, value: string | null): void {
    // acquire first: the old value may be the same string, which must not be forgotten between
    const id = value === null ? 0 : this.#pool.acquire(value, CHANNEL_OF[field])
    this.#pool.release(I[o + field])
    I[o + field] = id
  }

  #pushSeen(s: number, entry: number): void {
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    const n = I[o + META] >>> SEEN_SHIFT
    let ref = I[o + SEEN]
    const slabs = this.#seen
    if (n === 0 || 4 * n === slabs.size(ref)) {
      // a block of 4, 8, 16 or 32 values
      const grownRef = slabs.alloc(4 * Math.max(4, 2 * n))
      if (n > 0) {
        const from = slabs.offset(ref) >> 2
        const to = slabs.offset(grownRef) >> 2
        const source = slabs.words(ref)
        const target = slabs.words(grownRef)
        // word by word: at most 16, where a view to copy from would be an object
        for (let k = 0; k < n; k++) target[to + k] = source[from + k]
        slabs.free(ref)
      }
      ref = grownRef
      I[o + SEEN] = ref
    }
    slabs.words(ref)[(slabs.offset(ref) >> 2) + n] = entry
    I[o + META] = I[o + META] + (1 << SEEN_SHIFT)
  }

  #alloc(hi: number, lo: number): number {
    const s = this.#slots.alloc(hi, lo)
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    I[o + SEEN] = NONE
    I[o + IDS] = NONE
    return s
  }

  /** the strings, ids and seen list a slot refers to */
  #releaseContent(s: number): void {
    const I = this.#slots.intsOf(s)
    const o = this.#slots.intAt(s)
    const pool = this.#pool
    pool.release(I[o + SITE])
    pool.release(I[o + ENTRY])
    pool.release(I[o + EXIT])
    pool.release(I[o + REFERRER])
    pool.release(I[o + USER_AGENT])
    I[o + SITE] = I[o + ENTRY] = I[o + EXIT] = I[o + REFERRER] = I[o + USER_AGENT] = 0
    for (const field of ATTRIBUTE_STRINGS) {
      pool.release(I[o + field])
      I[o + field] = 0
    }
    I[o + COUNTED_DAY] = 0
    if (I[o + IDS] !== NONE) this.#ids.free(I[o + IDS])
    I[o + IDS] = NONE
    const n = I[o + META] >>> SEEN_SHIFT
    if (n > 0) {
      const ref = I[o + SEEN]
      const words = this.#seen.words(ref)
      const w = this.#seen.offset(ref) >> 2
      for (let k = 0; k < n; k++) pool.release(words[w + k] >>> 2)
      this.#seen.free(ref)
    }
    I[o + SEEN] = NONE
    I[o + META] = I[o + META] & ((1 << SEEN_SHIFT) - 1)
  }

  #remove(s: number): void {
    this.onLeave?.(this.hiAt(s), this.loAt(s))
    this.onPassage?.(this.hiAt(s), this.loAt(s))
    this.#releaseContent(s)
    this.#slots.free(s)
  }
}

/**
 * Whether a record's referrer names no host but the page's own, found in its bytes (referrerIsOwn):
 * true when it has none or names that host, false when it names another, undefined when the bytes
 * cannot tell (a text beyond ASCII, or held as UTF-16LE): read the fields then.
 */
function referrerOfOwnHost(e: EventRecord): boolean | undefined {
  const ref = e.textFrom('referrer')
  if (ref === -1) return true
  if (ref < 0) return undefined
  const refTo = ref + e.textLength(ref)
  // as referrerHost: the hostname, else the url, when not empty
  let own = e.textFrom('hostname')
  let ownIsUrl = false
  if (own === -1 || (own >= 0 && e.textLength(own) === 0)) {
    own = e.textFrom('url')
    ownIsUrl = true
    if (own >= 0 && e.textLength(own) === 0) own = -1
  }
  if (own === -2) return undefined
  return referrerIsOwn(e.bytes, ref, refTo, e.bytes, own, own < 0 ? -1 : own + e.textLength(own), ownIsUrl)
}

/** the screen's width, read from a record without the object its `screen` makes */
function screenWidthOf(e: LoggedEvent): number | undefined {
  return e instanceof EventRecord ? e.screenWidth : e.screen?.width
}
