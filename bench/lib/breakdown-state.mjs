/**
 * Breakdown state for the query bench's synthetic sessions (synthetic-state.mjs): each session gets
 * attributes from one of a few hundred classes (referrer, UTM fields, entry page, browser, country),
 * drawn from its hash; the fold's value counters count every session-day by them; the busiest
 * goals' conversions are counted by value from their day sets (the real pass a restore runs,
 * tally-values.ts, reading the classes instead of the store); and the summaries of the sessions a
 * breakdown reads — those converting on several days — go to a real LevelDB, out of memory.
 */
import { StateStore } from '../../dist/store/index.js'
import { summaryAttributes, tallyValues } from '../../dist/stream/index.js'
import { hashHi, hashKey, hashLo } from '../../dist/sketch/index.js'
import { fmix32 } from './synthetic-state.mjs'

/** user agents and countries the breakdown benches draw sessions from */
export const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
]
export const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'NL', 'IN', 'BR', 'JP', 'CA', 'ES', 'IT', 'PL', 'SE', 'AU', 'MX']
const CLASSES = 600

function summaryOf(siteId, c) {
  const r = (k, n) => fmix32(c * 7919 + k) % n
  const utm = r(1, 4) === 0
  return {
    site_id: siteId, session_id: `class-${c}`, visitor_id: null, user_id: null, first: 0, last: 0,
    entry_page: `/page-${r(2, 120)}`, entry_at: 0, exit_page: null, exit_at: 0, referrer: null, referrer_at: 0,
    user_agent: AGENTS[r(3, AGENTS.length)], screen_width: r(4, 2) ? 1280 : 390, client_at: 0,
    ref_host: r(5, 3) ? `ref${r(6, 40)}.example` : null, ref_host_at: 0,
    utm_source: utm ? `src${r(7, 12)}` : null, utm_source_at: 0, utm_medium: utm ? (r(8, 2) ? 'cpc' : 'email') : null, utm_medium_at: 0,
    utm_campaign: utm ? `c${r(9, 30)}` : null, utm_campaign_at: 0, country: COUNTRIES[r(10, COUNTRIES.length)], country_at: 0, seen: [],
  }
}

export function breakdownClasses(siteId) {
  const summaries = Array.from({ length: CLASSES }, (_, c) => summaryOf(siteId, c))
  const values = summaries.map((s) => summaryAttributes(s))
  const classOf = (hi, lo) => fmix32(lo ^ 0x3c6ef372) % CLASSES
  return {
    summaryOf: (hi, lo) => summaries[classOf(hi, lo)],
    valuesOf: (hi, lo) => values[classOf(hi, lo)],
    /** buildState's onSession: the fold's value counters of the session's days */
    onSession(state, day, hi, lo, spans) {
      const s = state.site(siteId)
      const v = values[classOf(hi, lo)]
      state.countValues(siteId, s, day, v, hi, lo)
      if (spans) state.countValues(siteId, s, day + 1, v, hi, lo)
    },
  }
}

/**
 * Counts `goalIds` by value (the others are left uncounted: their breakdowns would walk) and puts
 * the summaries of their sessions on several days in a store in `dir`, out of memory.
 * Returns the store, its lookup, and how long counting and writing took.
 */
export async function prepareBreakdowns(parts, siteId, allGoalIds, goalIds, classes, dir) {
  for (const state of parts) for (const id of allGoalIds) if (!goalIds.includes(id)) state.talliesOf(id).rebuilding = false
  const started = performance.now()
  let read = 0
  for (const state of parts) {
    const ok = await tallyValues(state, async (hks) => {
      read += hks.length
      return hks.map((hk) => classes.summaryOf(hashHi(hk), hashLo(hk)))
    })
    if (!ok) throw new Error('counting by value stopped')
  }
  const tallySeconds = (performance.now() - started) / 1000
  const store = await StateStore.open(dir)
  const writeStarted = performance.now()
  let written = 0
  for (const state of parts) {
    const table = state.summaries
    for (const id of goalIds) {
      state.goals.get(id)?.forEachIndexed((hi, lo, days) => {
        if (days.length < 2) return
        const hk = hashKey(hi, lo)
        if (table.has(hk)) return
        table.set(hk, classes.summaryOf(hi, lo))
        table.markDirty(table.slotOf(hi, lo))
        written++
      })
    }
    const dirty = state.takeDirty()
    const batch = store.openBatch()
    await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
    await batch.commit()
    state.written(dirty)
    state.evictOver(0)
  }
  return {
    store,
    lookup: (p, hks) => store.getSummaries(p, hks),
    tallySeconds,
    summariesRead: read,
    written,
    writeSeconds: (performance.now() - writeStarted) / 1000,
  }
}
