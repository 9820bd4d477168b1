import t from 'tap'
import { OTHER, RevenueDays, revenueKey } from './revenue-days.js'

const S = '00000000000000ab'

t.test('a retried event counts once, whatever the order', async (t) => {
  const orders = [[0, 1, 2], [2, 1, 0], [1, 2, 0]]
  const events: [string, number, bigint][] = [
    [revenueKey(S, 'order-1', 10), 20, 499_000n],
    [revenueKey(S, 'order-1', 11), 21, 499_000n],
    [revenueKey(S, undefined, 12), 21, OTHER],
  ]
  for (const order of orders) {
    const r = new RevenueDays()
    for (const i of order) r.record(...events[i])
    for (const i of order) r.record(...events[i])
    t.same(r.totals(0, 100), { total: 499_000n, events: 1, other: 1 }, `order ${order.join()}`)
    t.same(r.totals(20, 20), { total: 499_000n, events: 1, other: 0 }, 'on the earlier day')
    t.same(r.totals(21, 21), { total: 0n, events: 0, other: 1 })
    t.same(r.days().sort(), [20, 21])
  }
})

t.test('the join: an amount in the currency beats another currency; the larger amount wins', async (t) => {
  const r = new RevenueDays()
  const k = revenueKey(S, 'x', 0)
  t.same(r.record(k, 5, OTHER), [5])
  t.same(r.record(k, 5, 100n), [5])
  t.same(r.record(k, 5, OTHER), [], 'nothing changes')
  t.same(r.record(k, 5, 50n), [])
  t.same(r.record(k, 4, 50n), [5, 4], 'moves to the earlier day: both change')
  t.same(r.totals(0, 10), { total: 100n, events: 1, other: 0 })
  t.same(r.dayEntries(4), [[k, 100n]])
  t.same(r.dayEntries(5), [])
})

t.test('events without an id are told apart by their log position', async (t) => {
  const r = new RevenueDays()
  r.record(revenueKey(S, undefined, 1), 3, 10n)
  r.record(revenueKey(S, undefined, 2), 3, 10n)
  r.record(revenueKey(S, undefined, 1), 3, 10n)
  t.same(r.totals(3, 3), { total: 20n, events: 2, other: 0 })
})

t.test('retention drops whole days', async (t) => {
  const r = new RevenueDays()
  r.record(revenueKey(S, 'a', 0), 1, 1n)
  r.record(revenueKey(S, 'b', 0), 2, 2n)
  t.same(r.dropBefore(2), [1])
  t.equal(r.size, 1)
  t.same(r.totals(0, 9), { total: 2n, events: 1, other: 0 })
  r.clear()
  t.equal(r.size, 0)
})
