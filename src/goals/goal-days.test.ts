import t from 'tap'
import { DAY_MS } from './calendar.js'
import { U64Map, Words } from '../sketch/index.js'
import { DaysNotLoaded, GoalDays, dayTimeBase, type Candidate } from './goal-days.js'

/** noon UTC of a day, plus `ms` */
const noon = (day: number, ms = 0): number => day * DAY_MS + 12 * 3_600_000 + ms

t.test('record is an idempotent min-join', async (t) => {
  const g = new GoalDays()
  t.equal(g.record(1, 2, 10, noon(10, 500)), true)
  t.equal(g.record(1, 2, 10, noon(10, 500)), false, 'the same event again changes nothing')
  t.equal(g.record(1, 2, 10, noon(10, 900)), false, 'a later completion the same day changes nothing')
  t.equal(g.record(1, 2, 10, noon(10, 100)), true, 'an earlier one lowers the time')
  t.equal(g.size, 1)
  t.same(g.candidates(10, 10, 10), [{ hi: 1, lo: 2, ts: noon(10, 100) }])
  t.equal(g.conversions(10, 10), 1)
  t.equal(g.conversions(11, 20), 0)
  t.same(g.days(), [10])
})

t.test('times cover the whole local day in any zone', async (t) => {
  const g = new GoalDays()
  const d = 19_000
  const earliest = d * DAY_MS - 14 * 3_600_000 // 00:00 at UTC+14
  const latest = (d + 1) * DAY_MS + 12 * 3_600_000 - 1 // 23:59:59.999 at UTC−12
  g.record(0, 1, d, earliest)
  g.record(0, 2, d, latest)
  t.same(g.candidates(d, d, 10).map((c) => c.ts), [latest, earliest])
  t.equal(dayTimeBase(d), earliest)
  t.throws(() => g.record(0, 3, d, earliest - 1), RangeError)
  t.throws(() => g.record(0, 3, d, dayTimeBase(d) + 2 ** 32), RangeError)
  t.throws(() => g.record(0, 3, d, NaN), RangeError)
})

t.test('window sums with a session converting on days 1 and 3', async (t) => {
  for (const span of [undefined, [1, 3] as const]) {
    const g = new GoalDays()
    g.record(7, 7, 1, noon(1), span)
    g.record(7, 7, 3, noon(3), span)
    g.record(0, 0, 1, noon(1)) // another session, only day 1, with the zero hash
    g.record(5, 5, 2, noon(2))
    const label = span ? 'with span' : 'without span'
    t.equal(g.multiDayCount, 1, `${label}: one multi-day session`)
    t.equal(g.conversions(1, 3), 3, `${label}: [1,3]`)
    t.equal(g.conversions(2, 3), 2, `${label}: [2,3]`)
    t.equal(g.conversions(1, 1), 2, `${label}: [1,1]`)
    t.equal(g.conversions(3, 3), 1, `${label}: [3,3]`)
    t.equal(g.conversions(1, 2), 3, `${label}: [1,2]`)
    t.equal(g.conversions(-100, 100), 3, `${label}: a window wider than the days held`)
    const c13 = g.candidates(1, 3, 10)
    t.equal(c13.filter((c) => c.hi === 7).length, 1, `${label}: listed once`)
    t.equal(c13.find((c) => c.hi === 7)!.ts, noon(1), `${label}: at its first completion inside the window`)
    t.equal(g.candidates(2, 3, 10).find((c) => c.hi === 7)!.ts, noon(3), `${label}: window starting later`)
  }
})

t.test('a repeated window query sees side-index changes', async (t) => {
  const g = new GoalDays()
  g.record(1, 1, 1, noon(1))
  g.record(1, 1, 3, noon(3))
  t.equal(g.conversions(1, 3), 1)
  t.equal(g.conversions(1, 3), 1, 'asked again')
  g.record(2, 2, 1, noon(1))
  g.record(2, 2, 2, noon(2))
  t.equal(g.conversions(1, 3), 2)
  g.dropBefore(2)
  t.equal(g.conversions(1, 3), 2, 'day 1 dropped: each session is left with one day')
})

t.test('a session found on a third day joins its side-index entry', async (t) => {
  const g = new GoalDays()
  g.record(1, 1, 5, noon(5))
  g.record(1, 1, 9, noon(9))
  const v = g.multiDayVersion
  g.record(1, 1, 7, noon(7), [5, 9])
  t.ok(g.multiDayVersion > v, 'the side index changed')
  t.same(g.multiDayEntries(), [{ hi: 1, lo: 1, days: [5, 7, 9] }])
  t.equal(g.conversions(5, 9), 1)
  t.equal(g.conversions(6, 9), 1)
  const v2 = g.multiDayVersion
  g.record(1, 1, 7, noon(7, -5))
  t.equal(g.multiDayVersion, v2, 'an earlier time on a known day leaves the side index alone')
})

/**
 * Random sessions over days 0..19, ~10 % converting on several days. Without `offsetMs` times sit
 * near noon UTC; with it they spread over the whole local day of a zone at that offset, on the hour.
 */
function scenario(seed: number, offsetMs?: number): { g: GoalDays; events: { hi: number; lo: number; day: number; ts: number }[] } {
  let s = seed
  const rand = (n: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) % n
  }
  const g = new GoalDays()
  const events: { hi: number; lo: number; day: number; ts: number }[] = []
  for (let i = 0; i < 600; i++) {
    const hi = rand(2) // many equal halves: keys differ by lo only for half of them
    const lo = i
    const first = rand(20)
    const days = rand(10) === 0 ? [first, first + 1 + rand(3)] : [first]
    for (const day of days) {
      // coarse times make ties common
      for (let k = rand(3); k >= 0; k--) {
        const ts = offsetMs === undefined ? noon(day, rand(50) * 1000) : day * DAY_MS - offsetMs + rand(24) * 3_600_000
        events.push({ hi, lo, day, ts })
      }
    }
  }
  for (const e of events) g.record(e.hi, e.lo, e.day, e.ts, rand(2) ? [e.day - 3, e.day + 3] : undefined)
  return { g, events }
}

function referenceList(events: { hi: number; lo: number; day: number; ts: number }[], from: number, to: number) {
  const first = new Map<string, Candidate>()
  for (const e of events) {
    if (e.day < from || e.day > to) continue
    const id = `${e.hi}:${e.lo}`
    const cur = first.get(id)
    if (!cur || e.ts < cur.ts) first.set(id, { hi: e.hi, lo: e.lo, ts: e.ts })
  }
  return [...first.entries()].sort((a, b) => b[1].ts - a[1].ts || (a[0] < b[0] ? -1 : 1))
}

t.test('conversions equal a brute-force count for every window', async (t) => {
  const { g, events } = scenario(1)
  t.ok(g.multiDayCount > 20, `${g.multiDayCount} multi-day sessions`)
  let bad = 0
  for (let from = -1; from <= 24; from++) {
    for (let to = from; to <= 24; to++) if (g.conversions(from, to) !== referenceList(events, from, to).length) bad++
  }
  t.equal(bad, 0)
  const again = scenario(1)
  for (const e of again.events) again.g.record(e.hi, e.lo, e.day, e.ts)
  t.equal(again.g.conversions(0, 30), g.conversions(0, 30), 'replaying every event changes nothing')
  t.equal(again.g.size, g.size)
})

/** Pages through `candidates` the way the API does: cursor (ts, id), ties ordered by id. */
function pageThrough(g: GoalDays, from: number, to: number, limit: number): string[] {
  const got: string[] = []
  let cursor: { ts: number; id: string } | undefined
  for (let page = 0; page < 1000; page++) {
    const rows = g
      .candidates(from, to, limit, cursor?.ts)
      .map((c) => ({ id: `${c.hi}:${c.lo}`, ts: c.ts }))
      .filter((c) => cursor === undefined || c.ts < cursor.ts || c.id > cursor.id)
      .sort((a, b) => b.ts - a.ts || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
    got.push(...rows.map((r) => `${r.id}@${r.ts}`))
    if (rows.length < limit) break
    cursor = rows[rows.length - 1]
  }
  return got
}

t.test('candidates page exactly through ties', async (t) => {
  const H = 3_600_000
  for (const [seed, offset, label] of [[2, undefined, 'near noon UTC'], [5, 14 * H, 'UTC+14'], [6, -12 * H, 'UTC−12'], [7, 5.75 * H, 'UTC+5:45']] as const) {
    const { g, events } = scenario(seed, offset)
    for (const [from, to, limit] of [[0, 24, 7], [3, 10, 1], [5, 5, 4], [0, 24, 100], [2, 22, 30]] as const) {
      const want = referenceList(events, from, to).map(([id, c]) => `${id}@${c.ts}`)
      t.same(pageThrough(g, from, to, limit), want, `${label}, window [${from}, ${to}], limit ${limit}: ${want.length} sessions`)
    }
  }
})

t.test('candidates return what the caller needs and no more', async (t) => {
  const g = new GoalDays()
  // five sessions at ts 100, three tied at 90, two at 80
  const times = [100, 100, 100, 100, 100, 90, 90, 90, 80, 80]
  times.forEach((ms, i) => g.record(0, i + 1, 3, noon(3, ms)))
  const first = g.candidates(3, 3, 6)
  t.equal(first.length, 8, 'the 6 newest plus the two more tied at 90')
  t.same([...new Set(first.map((c) => c.ts - noon(3)))], [100, 90], 'newest first')
  const next = g.candidates(3, 3, 2, noon(3, 90))
  t.same(next.map((c) => c.ts - noon(3)), [90, 90, 90, 80, 80], 'all at the cursor, then the 2 newest below it')
  t.same(g.candidates(3, 3, 0, noon(3, 90)).length, 3, 'limit 0: only the ties at the cursor')
  t.same(g.candidates(4, 9, 5), [])
  t.equal(new Set(first.map((c) => c.lo)).size, first.length, 'each session once')
})

t.test('dropBefore forgets old days and their side-index links', async (t) => {
  const { g, events } = scenario(3)
  const v = g.multiDayVersion
  const beforeMulti = g.multiDayCount
  g.dropBefore(10)
  t.ok(g.days().every((d) => d >= 10))
  // a session left with one held day stays indexed: it may have converted other goals on other days
  t.ok(g.multiDayCount <= beforeMulti, `${beforeMulti} → ${g.multiDayCount} indexed sessions`)
  t.ok(g.multiDayVersion > v)
  const kept = events.filter((e) => e.day >= 10)
  t.equal(g.conversions(0, 30), referenceList(kept, 0, 30).length)
  t.equal(g.size, new Set(kept.map((e) => `${e.hi}:${e.lo}:${e.day}`)).size)
  for (const e of g.multiDayEntries()) t.ok(e.days.length >= 1 && e.days[0] >= 10)
  const v2 = g.multiDayVersion
  g.dropBefore(5)
  t.equal(g.multiDayVersion, v2, 'nothing to drop, nothing changes')

  const three = new GoalDays()
  for (const d of [1, 2, 3]) three.record(4, 4, d, noon(d))
  const v3 = three.multiDayVersion
  three.dropBefore(2)
  t.equal(three.multiDayCount, 1, 'still on two days')
  t.ok(three.multiDayVersion > v3, 'but the side index changed')
  t.same(three.multiDayEntries(), [{ hi: 4, lo: 4, days: [2, 3] }])
  three.setMultiDay([{ hi: 9, lo: 9, days: [2, 2] }])
  t.equal(three.multiDayCount, 0, 'an entry on no held day is dropped')
  three.setMultiDay([{ hi: 4, lo: 4, days: [1, 2] }])
  t.same(three.multiDayEntries(), [{ hi: 4, lo: 4, days: [2] }], 'an entry keeps its held days, one or more')
  g.clear()
  t.equal(g.size, 0)
  t.same(g.days(), [])
  t.equal(g.conversions(0, 30), 0)
})

t.test('restoring from raw parts gives the same answers', async (t) => {
  const { g } = scenario(4)
  const copy = new GoalDays()
  for (const d of g.days()) copy.setDay(d, g.dayMap(d)!)
  copy.setMultiDay(g.multiDayEntries())
  t.equal(copy.size, g.size)
  t.equal(copy.multiDayCount, g.multiDayCount)
  for (const [from, to] of [[0, 24], [3, 8], [7, 7]]) {
    t.equal(copy.conversions(from, to), g.conversions(from, to))
    t.same(copy.candidates(from, to, 5), g.candidates(from, to, 5))
  }
  const source = scenario(4).g
  const three = source.multiDayEntries()[0]
  source.record(three.hi, three.lo, 30, noon(30)) // one session on three days
  const rebuilt = new GoalDays()
  for (const d of source.days()) rebuilt.setDay(d, source.dayMap(d)!)
  rebuilt.rebuildMultiDay()
  const byKey = (a: { hi: number; lo: number }, b: { hi: number; lo: number }): number => a.hi - b.hi || a.lo - b.lo
  t.same(rebuilt.multiDayEntries().sort(byKey), source.multiDayEntries().sort(byKey), 'the side index can be derived from the days')
  t.equal(rebuilt.conversions(0, 30), source.conversions(0, 30))

  const doubled = g.multiDayEntries()
  copy.setMultiDay([...doubled, ...doubled.map((e) => ({ ...e, days: [e.days[0], e.days[0] + 30] }))])
  t.equal(copy.multiDayCount, g.multiDayCount, 'repeated sessions merge into one entry')
  t.same(copy.multiDayEntries()[0].days, doubled[0].days, 'a day whose set does not hold the session (a part from before retention) is trimmed')
  copy.setDay(g.days()[0], g.dayMap(g.days()[0])!)
  t.equal(copy.size, g.size, 'replacing a day does not double its size')
  const held = doubled[0]
  const later = new U64Map()
  later.setMin(held.hi, held.lo, 0)
  copy.setDay(held.days[0] + 30, later)
  copy.setMultiDay([...doubled, { ...held, days: [held.days[0], held.days[0] + 30] }])
  t.equal(copy.multiDayEntries().find((e) => e.hi === held.hi && e.lo === held.lo)!.days.length, held.days.length + 1, 'a held one joins the session\'s days')
  t.ok(g.memoryBytes() > g.size * 12)
  t.equal(g.dayMap(-50), undefined)
})

t.test('hasIn and forEachIn see each session once over a window, multi-day ones included', async (t) => {
  const g = new GoalDays()
  g.record(0, 1, 10, noon(10))
  g.record(0, 2, 11, noon(11))
  g.record(0, 3, 10, noon(10))
  g.record(0, 3, 12, noon(12)) // two days
  const seen = (from: number, to: number) => {
    const out: number[] = []
    g.forEachIn(from, to, (_hi, lo) => out.push(lo))
    return out.sort()
  }
  t.same(seen(10, 12), [1, 2, 3])
  t.same(seen(11, 12), [2, 3])
  t.same(seen(12, 12), [3])
  t.ok(g.hasIn(0, 3, 12, 12))
  t.ok(g.hasIn(0, 3, 9, 10))
  t.notOk(g.hasIn(0, 3, 11, 11))
  t.ok(g.hasIn(0, 2, 11, 11))
  t.notOk(g.hasIn(0, 2, 12, 20))
  t.notOk(g.hasIn(0, 9, 0, 100), 'unknown session')
})

t.test('hours: a set per hour, joined, dropped with their days', async (t) => {
  const g = new GoalDays()
  t.equal(g.recordHour(0, 1, 10 * 32 + 3), true)
  t.equal(g.recordHour(0, 1, 10 * 32 + 3), false, 'again: no change')
  t.equal(g.recordHour(0, 1, 10 * 32 + 5), true, 'another hour')
  t.equal(g.recordHour(0, 2, 11 * 32), true)
  t.equal(g.hourConversions(10 * 32 + 3), 1)
  t.equal(g.hourConversions(10 * 32 + 4), 0)
  t.same(g.dropHoursBefore(11), [10 * 32 + 3, 10 * 32 + 5])
  t.same([...g.hourMaps().keys()], [11 * 32])
  g.clear()
  t.equal(g.hourMaps().size, 0)
})

t.test('packed past days answer alike, and late completions on them still count exactly', async (t) => {
  const live = new GoalDays()
  const twin = new GoalDays()
  let x = 99
  const rand = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  const both = (hi: number, lo: number, day: number, ts: number) => {
    live.recordTime(hi, lo, day, ts)
    live.record(hi, lo, day, ts)
    twin.recordTime(hi, lo, day, ts)
    twin.record(hi, lo, day, ts)
  }
  const day0 = 20_000
  const at = (day: number) => day * DAY_MS + rand(20) * 3_600_000 + rand(3_600_000)
  for (let i = 0; i < 6_000; i++) {
    const day = day0 + rand(8)
    both(1 + rand(3_000), rand(4), day, at(day))
  }
  for (const day of live.days()) if (day < day0 + 6) live.dayMap(day)!.pack()
  t.ok(live.dayMap(day0)!.packed)
  // late completions: new sessions, earlier times of held ones, other days of held ones
  for (let i = 0; i < 800; i++) {
    const day = day0 + rand(8)
    both(1 + rand(3_500), rand(4), day, at(day) - rand(2) * 3_600_000)
  }
  const unpacked = live.days().filter((d) => !live.dayMap(d)!.packed)
  t.ok(unpacked.length > 2, `late completions unpacked days ${unpacked.map((d) => d - day0).join(', ')}`)
  for (const day of live.days()) if (day < day0 + 6) live.dayMap(day)!.pack()
  for (const [from, to] of [[day0, day0 + 7], [day0 + 2, day0 + 4], [day0 + 7, day0 + 7]]) {
    t.equal(live.conversions(from, to), twin.conversions(from, to), `conversions over ${from - day0}..${to - day0}`)
    const seen = (g: GoalDays) => {
      const out: string[] = []
      g.forEachIn(from, to, (hi, lo, first) => out.push(`${hi}:${lo}@${first}`))
      return out.sort()
    }
    t.same(seen(live), seen(twin), `sessions and first times over ${from - day0}..${to - day0}`)
    t.same(live.candidates(from, to, 50), twin.candidates(from, to, 50), 'the newest page')
    t.equal(live.firstCompletion(5, 1, day0 * DAY_MS, Infinity, from, to), twin.firstCompletion(5, 1, day0 * DAY_MS, Infinity, from, to))
  }
  t.equal(live.multiDayCount, twin.multiDayCount, 'the side index agrees')
})

t.test('a new day starts with room for as many sessions as the day before', async (t) => {
  const g = new GoalDays()
  const day = 20_000
  for (let i = 1; i <= 50_000; i++) g.record(i, 1, day, day * DAY_MS + 1000)
  g.record(1, 2, day + 1, (day + 1) * DAY_MS + 1000)
  t.ok(g.dayMap(day + 1)!.memoryBytes() >= g.dayMap(day)!.memoryBytes(), 'the next day has the room already')
  const before = g.dayMap(day + 1)!.memoryBytes()
  for (let i = 1; i <= 50_000; i++) g.record(i, 3, day + 1, (day + 1) * DAY_MS + 1000)
  t.equal(g.dayMap(day + 1)!.memoryBytes(), before, 'and fills it without growing')
  t.equal(g.conversions(day + 1, day + 1), 50_001)
})

t.test('a day evicted to the store keeps its counts; reading its sessions throws until it is loaded, and nothing changed', async (t) => {
  const g = new GoalDays()
  // session 1 on days 1 and 3 (indexed), session 2 on day 1 only, session 3 on day 3 only
  g.record(0, 1, 1, noon(1), [1, 3])
  g.record(0, 1, 3, noon(3), [1, 3])
  g.record(0, 2, 1, noon(1, 5))
  g.record(0, 3, 3, noon(3, 5))
  const counts = (): unknown => [g.size, g.conversions(1, 3), g.conversions(1, 1), g.entriesIn(1, 3), g.days(), g.daySize(1), g.multiDayCount]
  const before = counts()
  const stamp = g.dayStamp(1)
  const day1 = g.dayMap(1)!
  t.equal(g.evict(1), true)
  t.equal(g.evict(1), false, 'once')
  t.equal(g.evict(2), false, 'a day not held is not evicted')
  t.same(counts(), before, 'sizes, window counts, the days and the side index stay')
  t.equal(g.dayStamp(1), stamp, 'and its stamp')
  t.ok(g.holds(1) && g.isStored(1) && g.dayMap(1) === undefined && g.storedCount === 1)
  t.same(g.storedDays(), [1])
  t.same(g.storedDays(2, 9), [])
  const notLoaded = (fn: () => unknown, what: string) => t.throws(fn, DaysNotLoaded, what)
  notLoaded(() => g.candidates(1, 3, 10), 'the drill-down')
  notLoaded(() => g.partInto(1, 3, 0, 0, new Words()), 'a walk by parts')
  notLoaded(() => g.forEachIn(1, 1, () => undefined), 'a walk')
  notLoaded(() => g.earliestOn(0, 2, 1), 'a lookup')
  notLoaded(() => g.hasIn(0, 2, 1, 3), 'a session not in the side index')
  notLoaded(() => g.record(0, 4, 1, noon(1)), 'a new conversion on it')
  notLoaded(() => g.recordTime(0, 2, 1, noon(1, 9)), 'a further completion time')
  notLoaded(() => g.record(0, 5, 2, noon(2), [1, 2]), 'a conversion whose span reaches it')
  t.same(counts(), before, 'the throws changed nothing')
  t.equal(g.hasIn(0, 1, 1, 3), true, 'a multi-day session is answered from the side index')
  t.same(g.candidates(3, 3, 10).map((c) => c.lo), [3, 1], 'days in memory still answer')
  try {
    g.partInto(0, 9, 0, 0, new Words())
  } catch (err) {
    t.same((err as DaysNotLoaded).days, [1], 'the error names the days to load')
  }

  t.equal(g.load(1, day1), true)
  t.equal(g.load(1, day1), false, 'loaded once')
  t.same(counts(), before)
  t.equal(g.dayStamp(1), stamp, 'the same set: results kept under its stamp still hold')
  t.same(g.candidates(1, 1, 10).map((c) => c.lo).sort(), [1, 2])
})

t.test('evicted days: retention drops them, a load that finds the day gone takes nothing, a different set counts', async (t) => {
  const g = new GoalDays()
  for (let s = 0; s < 5; s++) g.record(0, s, 1, noon(1, s))
  g.record(0, 9, 2, noon(2))
  g.evict(1)
  g.dropBefore(2)
  t.same(g.days(), [2])
  t.equal(g.size, 1)
  t.equal(g.load(1, new U64Map()), false, 'dropped meanwhile: nothing taken')
  t.same(g.days(), [2])

  g.record(0, 10, 3, noon(3))
  g.evict(3)
  const stamp = g.dayStamp(3)
  const other = new U64Map()
  other.set(0, 10, 0)
  other.set(0, 11, 0)
  g.load(3, other)
  t.equal(g.size, 3, 'the store\'s set is what the day holds')
  t.not(g.dayStamp(3), stamp, 'a changed day gets a new stamp')
  g.evict(3)
  g.clear()
  t.same(g.days(), [])
  t.equal(g.storedCount, 0)
})

t.test('an evicted day takes its further completion times with it, and gets them back with its set', async (t) => {
  const g = new GoalDays()
  g.record(0, 1, 5, noon(5))
  // a second completion an hour later
  g.recordTime(0, 1, 5, noon(5, 3_600_000))
  const from = noon(5, 60_000)
  t.equal(g.completionFrom(0, 1, 5, noon(5), from), noon(5, 3_600_000))
  const set = g.dayMap(5)!
  const times = g.timesOf(5)!
  g.evict(5)
  t.equal(g.timesOf(5), undefined, 'the times left with the set')
  t.equal(g.completionFrom(0, 1, 5, noon(5), noon(5)), noon(5), 'a completion at or after the earliest needs no times')
  t.throws(() => g.completionFrom(0, 1, 5, noon(5), from), DaysNotLoaded, 'a later one does')
  g.mergeTimes(5, times)
  t.equal(g.timesOf(5), undefined, 'a restore keeps a stored day\'s times in the store')
  g.load(5, set, times)
  t.equal(g.completionFrom(0, 1, 5, noon(5), from), noon(5, 3_600_000), 'back with the set')
})

t.test('a day evicted keeps what a funnel reads of its sessions on several days: their earliest completions and further times', async (t) => {
  const g = new GoalDays()
  // session 1 on days 4 and 5, completing twice on day 4; session 2 on day 4 only, twice too
  g.record(0, 1, 4, noon(4), [4, 5])
  g.recordTime(0, 1, 4, noon(4, 3_600_000))
  g.record(0, 1, 5, noon(5), [4, 5])
  g.record(0, 2, 4, noon(4, 60_000))
  g.recordTime(0, 2, 4, noon(4, 7_200_000))
  // and many sessions on day 4 alone: what the day keeps is the few on several days
  for (let lo = 10; lo < 5000; lo++) g.record(0, lo, 4, noon(4, lo))
  const later = noon(4, 1000)
  const answers = () => [g.earliestOn(0, 1, 4), g.completionFrom(0, 1, 4, noon(4), later), g.completionFrom(0, 1, 4, noon(4), noon(4, 3_600_001))]
  const before = answers()
  t.same(before, [noon(4), noon(4, 3_600_000), undefined])
  const bytes = g.memoryBytes()
  const set = g.dayMap(4)!
  const times = g.timesOf(4)!
  g.evict(4)
  t.ok(g.memoryBytes() < bytes / 2, 'the set and the rest of the times left')
  t.same(answers(), before, 'the session on several days is answered from what the day kept')
  t.throws(() => g.earliestOn(0, 2, 4), DaysNotLoaded, 'a session on that day alone is read from the store')
  t.throws(() => g.completionFrom(0, 2, 4, noon(4, 60_000), later + 60_000), DaysNotLoaded)
  t.throws(() => g.earliestOn(0, 7, 4), DaysNotLoaded, 'so is one it does not know')

  // a session whose last day lies more than a week after the day: not kept, read from the store
  g.load(4, set, times)
  g.record(0, 3, 4, noon(4), [4, 13])
  g.record(0, 3, 13, noon(13), [4, 13])
  t.equal(g.earliestOn(0, 3, 4), noon(4))
  g.evict(4)
  t.throws(() => g.earliestOn(0, 3, 4), DaysNotLoaded, 'a session on days far apart is read back')
  t.same(answers(), before, 'the others still answer')

  // indexed after the day left (a restore installs its side index after letting the days go): read from the store
  const h = new GoalDays()
  h.record(0, 1, 4, noon(4))
  h.evict(4)
  h.setMultiDay([{ hi: 0, lo: 1, days: [4, 5] }])
  t.throws(() => h.earliestOn(0, 1, 4), DaysNotLoaded, 'nothing kept for a session the index did not list when the day left')

  g.load(4, set, times)
  t.equal(g.earliestOn(0, 2, 4), noon(4, 60_000), 'loaded: the set answers again')
  t.same(answers(), before)
  g.evict(4)
  g.dropBefore(5)
  t.same(g.days(), [5, 13], 'retention drops the day')
  t.equal(g.earliestOn(0, 1, 4), undefined, 'and what it kept')
})
