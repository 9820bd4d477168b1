import t from 'tap'
import { DAY_MS, DaysNotLoaded, GoalDays } from '../goals/index.js'
import { U64Map } from '../sketch/index.js'
import type { Site } from '../schema/index.js'
import { SettledDays, neededByFold, readingSettled } from './settled-days.js'

/** days of 2026: zones' offsets as they are now */
const D = 20_400
const noon = (day: number): number => (D + day) * DAY_MS + 12 * 3_600_000
const days = (...ds: number[]): number[] => ds.map((d) => D + d)
const site = (timezone: string): Site => ({ site_id: 'shop', domain: null, timezone, created_at: '2026-01-01T00:00:00.000Z' })

/** a goal with one session on each of days 10…14, days 10–12 evicted (their sets kept aside as the store) */
function setUp() {
  const g = new GoalDays()
  const stored = new Map<number, U64Map>()
  for (let d = 10; d <= 14; d++) g.record(0, d, D + d, noon(d))
  const goals = new Map([['g', g]])
  const settled = new SettledDays(goals)
  const reads: number[] = []
  settled.reader = async (_, day) => {
    reads.push(day)
    await new Promise((resolve) => setImmediate(resolve))
    return { set: stored.get(day)!, times: undefined }
  }
  for (let d = 10; d <= 12; d++) stored.set(D + d, g.dayMap(D + d)!)
  t.equal(settled.evict(g, days(10, 11, 12)), 3)
  return { g, goals, settled, reads }
}

t.test('the edge: no event at or after it, of a session begun at or after it, touches an evicted day in any zone', async (t) => {
  const { settled } = setUp()
  // day 12 ends at UTC−12 twelve hours after its UTC end
  t.equal(settled.edge, (D + 13) * DAY_MS + 12 * 3_600_000)
  t.equal(new SettledDays(new Map()).edge, -Infinity, 'nothing evicted: every event is past it')
  const none = new SettledDays(new Map())
  t.equal(none.evict(new GoalDays(), [1]), 0, 'without a reader nothing is evicted')
})

t.test('what a batch needs: the evicted days of each old session\'s span, as the whole batch leaves it', async (t) => {
  const { goals, settled } = setUp()
  const sites = new Map([['shop', site('UTC')]])
  const goalIds = () => ['g', 'gone']
  const spans = new Map<string, [number, number]>([['0:1', [noon(11), noon(14)]]])
  const table = {
    slotOf: (hi: number, lo: number) => (spans.has(`${hi}:${lo}`) ? lo : -1),
    first: (slot: number) => spans.get(`0:${slot}`)![0],
    last: (slot: number) => spans.get(`0:${slot}`)![1],
  }
  const ev = (lo: number, ts: number) => ({ hashHi: 0, hashLo: lo, ts, site_id: 'shop' })
  const need = (events: ReturnType<typeof ev>[]) => Object.fromEntries(neededByFold(settled.edge, events, table, sites, goalIds, goals))
  t.same(need([ev(5, noon(14)), ev(6, noon(15))]), {}, 'recent events of new sessions need nothing')
  t.same(need([ev(5, noon(10))]), { g: days(10) }, 'an old event needs its day')
  t.same(need([ev(1, noon(15))]), { g: days(11, 12) }, 'a recent event of a session begun on an evicted day needs its span')
  t.same(need([ev(7, noon(15)), ev(7, noon(10))]), { g: days(10, 11, 12) }, 'a new session\'s later event, then its old one: the span they make together')
  t.same(need([ev(5, noon(9)), ev(8, noon(12))]), { g: days(12) }, 'days not held are not asked for')
  t.same(need([{ ...ev(5, noon(10)), site_id: 'other' }]), {}, 'an unknown site: nothing (the fold skips it)')
  t.same(Object.fromEntries(neededByFold(-Infinity, [ev(5, noon(10))], table, sites, goalIds, goals)), {}, 'nothing evicted: nothing to ask')
  // at UTC+14 an event at 11:00 UTC of day 9 is on local day 10
  t.same(Object.fromEntries(neededByFold(settled.edge, [ev(5, (D + 9) * DAY_MS + 11 * 3_600_000)], table, new Map([['shop', site('Pacific/Kiritimati')]]), goalIds, goals)), { g: days(10) }, 'days in the site\'s zone')
})

t.test('reading: a question that meets evicted days reads them back and is asked again; they stay while it runs', async (t) => {
  const { g, settled, reads } = setUp()
  let asked = 0
  const answer = await readingSettled([{ settled }], () => {
    asked++
    t.equal(settled.pins, 1, 'pinned while it runs')
    return g.candidates(D + 10, D + 14, 10).length
  })
  t.equal(answer, 5)
  t.equal(asked, 4, 'asked again after each day the walk met, newest first')
  t.same(reads.sort(), days(10, 11, 12))
  t.equal(settled.pins, 0)
  t.equal(settled.loaded, 3)
  t.equal(settled.evict(g, days(10, 11, 12)), 0, 'read back since the last pass: they stay for this one')
  settled.passed()
  t.equal(settled.evict(g, days(10, 11, 12)), 3)

  // two questions at once share each read
  reads.length = 0
  await Promise.all([settled.load('g', days(10, 11)), settled.load('g', days(11, 12)), settled.loadRange(['g', 'none'], D + 12, D + 20)])
  t.same(reads.sort(), days(10, 11, 12), 'one read a day')

  await t.rejects(readingSettled([{ settled }], () => {
    throw new Error('other')
  }), /other/, 'other errors go through')
  g.evict(D + 10)
  const elsewhere = new SettledDays(new Map())
  elsewhere.reader = settled.reader
  await t.rejects(readingSettled([{ settled: elsewhere }], () => g.earliestOn(0, 10, D + 10)), DaysNotLoaded, 'a goal no longer held: not asked again')
  settled.reader = undefined
  await t.rejects(readingSettled([{ settled }], () => g.earliestOn(0, 10, D + 10)), DaysNotLoaded, 'nothing to read with: not asked again')
  t.equal(settled.pins, 0)
})
