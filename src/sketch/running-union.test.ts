import t from 'tap'
import { RunningUnion } from './running-union.js'
import { SessionCounter } from './session-counter.js'

function counter(from: number, n: number, threshold: number): SessionCounter {
  const c = new SessionCounter(threshold)
  for (let i = from; i < from + n; i++) c.add(Math.imul(i, 0x9e3779b1) >>> 0, Math.imul(i ^ 0x5bd1e995, 0x85ebca6b) >>> 0)
  return c
}

t.test('merged again and again, it estimates as the union of the counters as they are', async (t) => {
  const past = counter(0, 50_000, 100)
  const today = new SessionCounter(100)
  const u = new RunningUnion()
  u.merge(past)
  t.equal(Math.round(u.estimate()), past.count(), 'one counter: its own estimate')
  for (const [from, n] of [[49_000, 3_000], [60_000, 20], [70_000, 40_000]]) {
    for (let i = from; i < from + n; i++) today.add(Math.imul(i, 0x9e3779b1) >>> 0, Math.imul(i ^ 0x5bd1e995, 0x85ebca6b) >>> 0)
    u.merge(today)
    t.equal(Math.round(u.estimate()), SessionCounter.union([past, today]), `today grown to ${today.count()}`)
  }
})

t.test('exact counters are added hash by hash', async (t) => {
  const a = counter(0, 300, 1000)
  const b = counter(200, 300, 1000)
  const u = new RunningUnion()
  u.merge(a)
  u.merge(b)
  t.ok(a.isExact && b.isExact)
  t.ok(Math.abs(u.estimate() - 500) < 10, `about 500: ${u.estimate()}`)
  t.equal(Math.round(new RunningUnion().estimate()), 0, 'empty')
})
