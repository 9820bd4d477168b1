import t from 'tap'
import { CombinationCounters, combinationKey, parseCombination } from './combination-counters.js'

t.test('counters by combination: created once, found again, listed with their combinations', async (t) => {
  const c = new CombinationCounters(3)
  const a = c.counter(['x', null, 'y', 'z'], [3, 1, 0], 16)
  a.add(1, 2)
  t.equal(c.counter(['x', null, 'y', 'z'], [3, 1, 0], 16), a, 'the same combination, the same counter')
  t.equal(c.get(['x', null, 'y', 'z'], [3, 1, 0]), a)
  t.equal(c.get(['x', 'w', 'y', 'z'], [3, 1, 0]), undefined)
  c.counter(['q', null, 'y', 'z'], [3, 1, 0], 16).add(3, 4)
  const listed: [(string | null)[], number][] = []
  c.forEach((combination, counter) => listed.push([combination, counter.count()]))
  t.same(listed, [[['z', null, 'x'], 1], [['z', null, 'q'], 1]])
  const d = new CombinationCounters(3)
  d.set(['z', null, 'x'], a)
  t.equal(d.get(['x', null, 'y', 'z'], [3, 1, 0]), a, 'set puts a counter where counter() finds it')
})

t.test('a combination\'s key gives back any text, null included, and no two combinations share one', async (t) => {
  for (const combination of [[null], ['a'], [''], ['e\u0000mail', null, 'x\u0001\u0004y\u0001\u0003', '\u0002'], [null, null, null]]) {
    t.same(parseCombination(combinationKey(combination)), combination, JSON.stringify(combination))
  }
  t.not(combinationKey(['a\u0000', 'b']), combinationKey(['a', '\u0000b']))
  t.not(combinationKey([null]), combinationKey(['']))
})
