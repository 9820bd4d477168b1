import t from 'tap'
import { bars, pointLabel } from './chart.js'

t.test('bars scale to the largest value; zeros draw nothing; a small value still shows', async (t) => {
  const b = bars([0, 5, 10, 1000], 400, 100)
  t.equal(b.length, 4)
  t.same(b.map((x) => x.x), [0, 100, 200, 300])
  t.equal(b[0].height, 0)
  t.equal(b[3].height, 100)
  t.equal(b[3].y, 0)
  t.equal(b[1].height, 1, 'at least a pixel')
  t.equal(b[2].height, 1)
  t.same(bars([], 100, 10), [])
  t.same(bars([0, 0], 100, 10).map((x) => x.height), [0, 0], 'all zeros: no division by zero')
})

t.test('pointLabel', async (t) => {
  t.equal(pointLabel('2026-10-25T02:00:00+01:00', true), '2026-10-25 02:00')
  t.equal(pointLabel('2026-10-25T00:00:00+02:00', false), '2026-10-25')
})
