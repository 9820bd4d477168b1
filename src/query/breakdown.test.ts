import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LoggedEvent } from '../schema/index.js'
import { eventKey } from '../schema/index.js'
import { GoalIndex, PartitionState } from '../stream/index.js'
import { StateStore } from '../store/index.js'
import { dayOf } from '../goals/index.js'
import { hash64, hashKey, initHash } from '../sketch/index.js'
import { breakdownBody, breakdownPartial, mergeBreakdowns } from './breakdown.js'

t.before(initHash)

const DAY = 86_400_000
const site = { site_id: 's', domain: null, timezone: 'UTC', created_at: '2026-01-01T00:00:00Z' }
const goals = new GoalIndex()
goals.add({ id: 'buy', site_id: 's', name: 'Buy', goal_type: 'custom_event', match_event: 'buy', created_at: site.created_at })

/** sessions whose attributes are spread over events on two days, some converting */
function sessions(now: number): LoggedEvent[][] {
  const out: LoggedEvent[][] = []
  for (let i = 0; i < 30; i++) {
    const id = `v${i}`
    const at = now - DAY - 3_600_000 + i * 60_000
    const ev = (over: Partial<LoggedEvent>): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: id, ts: at, received_at: at, ...over })
    const events = [
      ev({ path: `/in${i % 3}`, referrer: i % 2 ? 'https://a.example/' : undefined, utm: i % 5 === 0 ? { source: 'mail' } : undefined }),
      ev({ ts: at + 1000, path: '/next', referrer: 'https://b.example/', country: i % 4 ? 'DE' : undefined, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0' }),
      ev({ ts: at + DAY, path: '/later', country: 'FR', utm: { source: 'late', campaign: 'c' } }),
    ]
    if (i % 3 === 0) events.push(ev({ ts: at + DAY + 5000, type: 'custom_event', event_name: 'buy' }))
    out.push(events)
  }
  return out
}

function fold(state: PartitionState, events: LoggedEvent[]): void {
  events.forEach((e, offset) => {
    const h = hash64(eventKey(e.site_id, e.session_id))
    state.fold(e, h.hi, h.lo, site, goals, offset)
  })
}

async function answer(state: PartitionState, by: 'source' | 'referrer' | 'country' | 'entry_page' | 'utm_campaign', from: number, to: number) {
  const lookup = async (_p: number, hks: string[]) => hks.map((hk) => state.summaries.get(hk))
  const partial = await breakdownPartial(state, { kind: 'breakdown', site_id: 's', goal_id: 'buy', window: { from, to }, by }, lookup)
  return breakdownBody('buy', 2, by, 10, mergeBreakdowns([partial]))
}

/** deterministic shuffles */
function shuffled<T>(list: T[], seed: number): T[] {
  const out = [...list]
  let x = seed
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    const j = x % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

t.test('a breakdown does not depend on the order the events arrived in', async (t) => {
  const now = Date.now()
  const all = sessions(now).flat()
  const today = dayOf(now, 'UTC')
  const inOrder = new PartitionState(0, 1000)
  fold(inOrder, [...all].sort((a, b) => a.ts - b.ts))
  const dims = ['source', 'referrer', 'country', 'entry_page', 'utm_campaign'] as const
  const want = new Map<string, unknown>()
  for (const by of dims) for (const [from, to] of [[today - 1, today], [today, today], [today - 1, today - 1]]) want.set(`${by}:${from}:${to}`, await answer(inOrder, by, from, to))
  t.same((want.get(`referrer:${today - 1}:${today}`) as { rows: unknown[] }).rows, [
    { value: 'a.example', sessions: 15, conversions: 5, conversion_rate: 5 / 15 },
    { value: 'b.example', sessions: 15, conversions: 5, conversion_rate: 5 / 15 },
  ], 'the earliest referrer that carries one, each session once')
  for (const seed of [1, 2, 3, 4, 5]) {
    const state = new PartitionState(0, 1000)
    fold(state, shuffled(all, seed))
    let same = true
    for (const by of dims) {
      for (const [from, to] of [[today - 1, today], [today, today], [today - 1, today - 1]]) {
        const got = await answer(state, by, from, to)
        if (JSON.stringify(got) !== JSON.stringify(want.get(`${by}:${from}:${to}`))) {
          same = false
          t.same(got, want.get(`${by}:${from}:${to}`), `order ${seed}: ${by} over ${from}..${to}`)
        }
      }
    }
    t.ok(same, `order ${seed}: every breakdown as in time order`)
  }
})

t.test('the counters survive a snapshot and a restore, and a failed snapshot writes them again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-breakdown-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const store = await StateStore.open(dir)
  t.teardown(() => store.close())
  const now = Date.now()
  const today = dayOf(now, 'UTC')
  const state = new PartitionState(0, 1000)
  const rest = sessions(now)
  // a session whose every value is its own: only the failed snapshot's marks could ever write them
  const at = now - DAY
  const solo = (over: Partial<LoggedEvent>): LoggedEvent => ({ type: 'pageview', site_id: 's', session_id: 'solo', ts: at, received_at: at, ...over })
  fold(state, [
    solo({ path: '/solo', referrer: 'https://solo.example/', utm: { source: 'solo' }, country: 'JP', user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile Safari/604.1' }),
    solo({ ts: at + 1000, type: 'custom_event', event_name: 'buy' }),
  ])
  // a snapshot that fails: its counters must be written by the next one
  const failed = state.takeDirty()
  await store.encodeSnapshot(state, failed, [], new Map(), () => undefined)
  state.restoreDirty(failed)
  state.written(failed)
  fold(state, rest.flat())
  t.match(JSON.stringify(await answer(state, 'source', today - 1, today)), /"value":"solo","sessions":1,"conversions":1/, 'the session of its own')
  const dirty = state.takeDirty()
  const batch = store.openBatch()
  await store.encodeSnapshot(state, dirty, [], new Map(), batch.add, true)
  await batch.commit()
  state.written(dirty)

  const restored = new PartitionState(0, 1000)
  await store.loadPartition(restored)
  // the restored state has no summaries in memory: its sessions' attributes come from the store
  const lookup = async (_p: number, hks: string[]) => store.getSummaries(0, hks)
  for (const by of ['source', 'country', 'entry_page'] as const) {
    const q = { kind: 'breakdown' as const, site_id: 's', goal_id: 'buy', window: { from: today - 1, to: today }, by }
    const before = await breakdownPartial(state, q, async (_p, hks) => hks.map((hk) => state.summaries.get(hk)))
    const after = await breakdownPartial(restored, q, lookup)
    t.same(breakdownBody('buy', 2, by, 10, after), breakdownBody('buy', 2, by, 10, before), by)
  }
  const h = hash64(eventKey('s', 'v0'))
  t.ok(state.summaries.get(hashKey(h.hi, h.lo)), 'the live state kept its summaries')
})
