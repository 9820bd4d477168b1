import t from 'tap'
import { RateLimiter } from './rate-limit.js'

t.test('a bucket allows its rate per second and tells how long to wait', async (t) => {
  const r = new RateLimiter(5)
  for (let i = 0; i < 5; i++) t.equal(r.take('site', 1, 1000), 0)
  t.equal(r.take('site', 1, 1000), 1, 'sixth event in the same instant waits a second')
  t.equal(r.take('other', 1, 1000), 0, 'buckets are per key')
  t.equal(r.take('site', 1, 1200), 0, 'refills at 5/s: one token after 200 ms')
  t.equal(r.take('site', 10, 1200), 2, 'a batch larger than the burst waits longer')
})

t.test('rate 0 is off', async (t) => {
  const r = new RateLimiter(0)
  t.notOk(r.enabled)
  for (let i = 0; i < 100; i++) t.equal(r.take('x'), 0)
})
