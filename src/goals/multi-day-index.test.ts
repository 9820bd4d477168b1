import t from 'tap'
import { MultiDayIndex } from './multi-day-index.js'

t.test('the index agrees with a plain map of days through adds, new days, drops and reloads', async (t) => {
  const index = new MultiDayIndex()
  const ref = new Map<number, Set<number>>()
  let x = 17
  const rand = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  const check = (label: string) => {
    const entries = index.entries()
    t.equal(entries.length, ref.size, `${label}: size`)
    let wrong = 0
    for (const e of entries) {
      const want = [...(ref.get(e.lo) ?? [])].sort((a, b) => a - b)
      if (e.hi !== 7 || e.days.join() !== want.join() || index.daysOf(7, e.lo)?.join() !== want.join()) wrong++
    }
    t.equal(wrong, 0, `${label}: every session with its days`)
    for (const day of [0, 20, 38, 39, 41]) {
      const want = [...ref].filter(([, days]) => Math.max(...days) >= day).map(([lo, days]) => `${lo}:${[...days].sort((a, b) => a - b).join()}`).sort()
      const got: string[] = []
      index.forEachEndingFrom(day, (hi, lo, days) => void got.push(`${hi === 7 ? lo : -1}:${days.join()}`))
      t.same(got.sort(), want, `${label}: the sessions whose last day is ${day} or later, each once`)
    }
    for (const [from, to] of [[0, 40], [10, 20], [15, 15]]) {
      let over = 0
      for (const days of ref.values()) over += Math.max(0, [...days].filter((d) => d >= from && d <= to).length - 1)
      t.equal(index.overcount(from, to), over, `${label}: overcount ${from}..${to}`)
      const repeat = index.laterDaysFilter(from, to)
      let bad = 0
      for (const [lo, days] of ref) {
        const inside = [...days].filter((d) => d >= from && d <= to).sort((a, b) => a - b)
        for (const d of days) if (repeat(7, lo, d) !== (inside.length > 0 && d !== inside[0] && d >= from && d <= to) && d >= from && d <= to) bad++
      }
      t.equal(bad, 0, `${label}: repeats over ${from}..${to}`)
    }
  }
  for (let i = 0; i < 20_000; i++) {
    const lo = 1 + rand(3_000)
    const held = ref.get(lo)
    if (held && rand(2)) {
      const day = rand(40)
      if (!index.addDay(7, lo, day)) t.fail(`session ${lo} is indexed`)
      held.add(day)
    } else {
      // one day or several: a session on one day of this goal may be on other days of other goals
      const days = [rand(40), rand(40), rand(40)].slice(0, 1 + rand(3))
      const changed = index.add(7, lo, days)
      const joined = new Set([...(held ?? []), ...days])
      if (changed !== (joined.size !== (held?.size ?? 0))) t.fail(`add tells whether session ${lo} changed`)
      ref.set(lo, joined)
    }
  }
  t.notOk(index.addDay(7, 99_999, 3), 'a session not indexed is not')
  check('after 20 000 updates')
  index.dropBefore(25)
  for (const [lo, days] of ref) {
    const kept = new Set([...days].filter((d) => d >= 25))
    if (kept.size > 0) ref.set(lo, kept)
    else ref.delete(lo)
  }
  check('after dropping days before 25')
  const reloaded = new MultiDayIndex()
  reloaded.load(index.entries())
  t.same(reloaded.entries(), index.entries(), 'load(entries()) gives the same index')
  let views = 0
  index.forEach((hi, lo, days) => {
    if (hi === 7 && days.join() === [...ref.get(lo)!].sort((a, b) => a - b).join() && index.daysView(hi, lo)?.join() === days.join()) views++
  })
  t.equal(views, ref.size, 'forEach and daysView give each session with its days')
  index.clear()
  t.equal(index.size, 0)
})

t.test('sessions on two neighbouring days, the common case, take a few dozen bytes each', async (t) => {
  const index = new MultiDayIndex()
  for (let i = 1; i <= 100_000; i++) index.add(i, i * 31, [100 + (i % 30), 101 + (i % 30)])
  const perSession = index.memoryBytes() / index.size
  // an array of days per session took ~120 B on the heap, before the index itself
  t.ok(perSession < 80, `${perSession.toFixed(1)} B per session`)
  t.equal(index.overcount(100, 130), 100_000)
  t.same(index.daysOf(5, 155), [105, 106])
})

t.test('forEachOn: the sessions holding a day whose last day is at most a bound, each once', async (t) => {
  const m = new MultiDayIndex()
  m.add(0, 1, [4, 5])
  m.add(0, 2, [3, 4])
  m.add(0, 3, [5, 6])
  m.add(0, 4, [4, 12])
  m.add(0, 5, [2, 3])
  m.add(0, 6, [4, 5])
  // gains later days: listed under 5 and 7 before, counted under 8 only
  m.addDay(0, 6, 7)
  m.addDay(0, 6, 8)
  const on = (day: number, until: number) => {
    const out: number[] = []
    m.forEachOn(day, until, (_, lo) => out.push(lo))
    return out.sort((a, b) => a - b)
  }
  t.same(on(4, 11), [1, 2, 6])
  t.same(on(4, 12), [1, 2, 4, 6])
  t.same(on(4, 5), [1, 2])
  t.same(on(3, 4), [2, 5])
  t.same(on(3, 3), [5], 'the bound is on the last day')
  t.same(on(5, 7), [1, 3], 'a session that went on past the bound is left out')
  t.same(on(5, 8), [1, 3, 6], 'and taken once under its last day, though listed under the earlier ones too')
  t.same(on(9, 20), [])
})
