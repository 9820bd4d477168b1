import t from 'tap'
import { DEFAULT_TOP_K_CAPACITY, TopK } from './top-k.js'

t.test('orders by count descending, then value ascending', async (t) => {
  const k = new TopK()
  t.equal(k.capacity, DEFAULT_TOP_K_CAPACITY)
  for (const [v, n] of [['/b', 3], ['/a', 3], ['/c', 5], ['/d', 1]] as const) for (let i = 0; i < n; i++) k.add(v, 1, 10)
  t.same(k.top(10), [
    { value: '/c', count: 5 },
    { value: '/a', count: 3 },
    { value: '/b', count: 3 },
    { value: '/d', count: 1 },
  ])
  t.same(k.top(2).map((e) => e.value), ['/c', '/a'], 'cut to n')
  k.add('/d', 10, 11)
  t.equal(k.top(1)[0].value, '/d', 'weights add up')
  t.equal(k.top(1)[0].count, 11)
})

t.test('filters by prefix and by last day seen', async (t) => {
  const k = new TopK(10)
  k.add('/blog/a', 1, 100)
  k.add('/blog/b', 1, 90)
  k.add('/pricing', 1, 100)
  k.add('/blog/b', 1, 80) // an older replayed event does not move the last day back
  t.same(k.top(10, { prefix: '/blog' }).map((e) => e.value), ['/blog/b', '/blog/a'])
  t.same(k.top(10, { prefix: '/blog', minDay: 95 }).map((e) => e.value), ['/blog/a'])
  t.same(k.top(10, { minDay: 90 }).map((e) => e.value).sort(), ['/blog/a', '/blog/b', '/pricing'])
  t.same(k.top(10, { prefix: '/nothing' }), [])
  t.same(k.top(0), [])
})

t.test('evicts the smallest counter when full (Space-Saving)', async (t) => {
  const k = new TopK(3)
  for (let i = 0; i < 10; i++) k.add('heavy', 1, 1)
  for (let i = 0; i < 5; i++) k.add('medium', 1, 1)
  k.add('light', 1, 1)
  t.equal(k.size, 3)
  k.add('new', 1, 2)
  t.equal(k.size, 3, 'still at capacity')
  const values = k.top(3).map((e) => e.value)
  t.notOk(values.includes('light'), 'the smallest was evicted')
  t.ok(values.includes('new'))
  const entry = k.entries().find((e) => e.value === 'new')!
  t.equal(entry.count, 2, 'the newcomer inherits the evicted count')
  t.equal(entry.error, 1, 'and records it as possible error')
  t.equal(entry.lastDay, 2)

  // A stream of many one-off values never pushes out a value above total / capacity.
  const s = new TopK(20)
  for (let i = 0; i < 5000; i++) {
    s.add(`noise-${i}`)
    if (i % 10 === 0) s.add('frequent')
  }
  t.equal(s.top(1)[0].value, 'frequent')
  t.ok(s.top(1)[0].count >= 500, 'never under-counted')
})

t.test('entries round-trip through fromEntries', async (t) => {
  const k = new TopK(5)
  for (let i = 0; i < 20; i++) k.add(`/p${i % 7}`, 1 + (i % 3), i)
  const back = TopK.fromEntries(5, k.entries())
  t.same(back.top(5), k.top(5))
  t.same(back.entries().sort((a, b) => a.value.localeCompare(b.value)), k.entries().sort((a, b) => a.value.localeCompare(b.value)))
  // the restored heap keeps evicting the true minimum
  back.add('/fresh', 1, 99)
  k.add('/fresh', 1, 99)
  t.same(back.top(5), k.top(5))
  t.ok(k.memoryBytes() > 0)
  t.throws(() => TopK.fromEntries(1, k.entries()), RangeError)
  t.throws(() => TopK.fromEntries(5, [{ value: 'x', count: 1, error: 0, lastDay: 0 }, { value: 'x', count: 1, error: 0, lastDay: 0 }]), RangeError)
  t.throws(() => new TopK(0), RangeError)
})
