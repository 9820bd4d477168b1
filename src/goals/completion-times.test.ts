import t from 'tap'
import { CompletionTimes, MAX_TIMES_PER_SESSION, firstAtOrAfter } from './completion-times.js'
import { GoalDays, dayTimeBase } from './goal-days.js'

t.test('a session with one time keeps nothing here; a second time keeps both, sorted, once', async (t) => {
  const c = new CompletionTimes()
  t.equal(c.add(1, 2, 500, 500), false, 'its only time')
  t.equal(c.of(1, 2), undefined)
  t.equal(c.add(1, 2, 500, 300), true)
  t.same(c.of(1, 2), [300, 500])
  t.equal(c.add(1, 2, 300, 900), true)
  t.equal(c.add(1, 2, 300, 500), false, 'again: no change')
  t.same(c.of(1, 2), [300, 500, 900])
  t.equal(c.size, 1)
})

t.test('merge is a union, and the cap keeps the earliest times whatever the order', async (t) => {
  const a = new CompletionTimes()
  const b = new CompletionTimes()
  for (let i = 1; i < MAX_TIMES_PER_SESSION + 50; i++) a.add(0, 1, 0, i * 2)
  for (let i = MAX_TIMES_PER_SESSION + 49; i >= 1; i--) b.add(0, 1, 0, i * 2)
  t.same(a.of(0, 1), b.of(0, 1), 'the same kept times in either order')
  t.equal(a.of(0, 1)!.length, MAX_TIMES_PER_SESSION)
  t.equal(a.of(0, 1)![0], 0)
  const c = new CompletionTimes()
  c.add(0, 1, 5, 7)
  c.add(3, 4, 1, 2)
  c.merge(a)
  t.equal(c.of(0, 1)!.length, MAX_TIMES_PER_SESSION)
  t.same(c.of(3, 4), [1, 2])
})

t.test('firstAtOrAfter', async (t) => {
  t.equal(firstAtOrAfter([1, 5, 9], 0), 1)
  t.equal(firstAtOrAfter([1, 5, 9], 5), 5)
  t.equal(firstAtOrAfter([1, 5, 9], 6), 9)
  t.equal(firstAtOrAfter([1, 5, 9], 10), undefined)
})

t.test('GoalDays.firstCompletion: the first time at or after an instant, up to a limit, over the days', async (t) => {
  const g = new GoalDays()
  const day = 20_000
  const at = (d: number, h: number) => dayTimeBase(d) + 14 * 3_600_000 + h * 3_600_000
  for (const [d, h] of [[day, 9], [day, 12], [day, 15], [day + 1, 1]] as const) {
    g.recordTime(0, 1, d, at(d, h))
    g.record(0, 1, d, at(d, h))
  }
  t.equal(g.firstCompletion(0, 1, at(day, 0), Infinity, day, day + 1), at(day, 9))
  t.equal(g.firstCompletion(0, 1, at(day, 10), Infinity, day, day + 1), at(day, 12), 'a later time of the same day')
  t.equal(g.firstCompletion(0, 1, at(day, 13), at(day, 14), day, day + 1), undefined, 'none before the limit')
  t.equal(g.firstCompletion(0, 1, at(day, 16), Infinity, day, day + 1), at(day + 1, 1), 'the next day')
  t.equal(g.firstCompletion(0, 1, at(day, 16), Infinity, day, day), undefined, 'the next day is outside the days asked')
  t.equal(g.firstCompletion(0, 9, at(day, 0), Infinity, day, day + 1), undefined, 'another session')
})

t.test('many sessions in shuffled order: every list exact, merges alike, a few bytes a time', async (t) => {
  let x = 5
  const rand = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
  const whole = new CompletionTimes()
  const halves = [new CompletionTimes(), new CompletionTimes()]
  const ref = new Map<number, { earliest: number; times: Set<number> }>()
  for (let i = 0; i < 60_000; i++) {
    const lo = 1 + rand(5_000)
    const t = rand(100_000)
    const held = ref.get(lo)
    // as GoalDays calls it: with the earliest time held before this one
    const earliest = held ? held.earliest : t
    whole.add(0, lo, earliest, t)
    halves[i % 2].add(0, lo, ref.get(lo)?.earliest ?? t, t)
    if (held) {
      held.times.add(t)
      held.earliest = Math.min(held.earliest, t)
    } else ref.set(lo, { earliest: t, times: new Set([t]) })
  }
  let wrong = 0
  for (const [lo, { times }] of ref) {
    const want = [...times].sort((a, b) => a - b)
    const got = whole.of(0, lo)
    if (want.length === 1 ? got !== undefined : got === undefined || got.join() !== want.join()) wrong++
  }
  t.equal(wrong, 0, 'every session: all its times, ascending, once')
  const merged = new CompletionTimes()
  merged.merge(halves[0])
  merged.merge(halves[1])
  let differ = 0
  whole.forEach((hi, lo, times) => {
    if (merged.of(hi, lo)?.join() !== times.join()) differ++
  })
  t.equal(differ, 0, 'the union of two halves is the whole')
  let kept = 0
  whole.forEach((_hi, _lo, times) => (kept += times.length))
  t.ok(whole.memoryBytes() / kept < 20, `${(whole.memoryBytes() / kept).toFixed(1)} B per time kept`)
})
