import t from 'tap'
import { allocateTypes, DEFAULT_MIX, parseMix } from './event-mix.js'

t.test('a mix is type=weight pairs; zero weights drop out', async (t) => {
  t.same(parseMix('pageview=70, custom_event=30,copy=0'), [{ type: 'pageview', weight: 70 }, { type: 'custom_event', weight: 30 }])
  t.same(parseMix('web_vitals=0.5'), [{ type: 'web_vitals', weight: 0.5 }])
  t.ok(parseMix(DEFAULT_MIX).length > 3, 'the default parses')
})

t.test('a bad mix is refused with the part that is wrong', async (t) => {
  t.throws(() => parseMix('pageview'), /"pageview" is not type=weight/)
  t.throws(() => parseMix('pageviews=3'), /"pageviews" is not an event type \(one of pageview, /)
  t.throws(() => parseMix('pageview=1,pageview=2'), /pageview is named twice/)
  t.throws(() => parseMix('pageview=-1'), /not type=weight/)
  t.throws(() => parseMix('pageview=0'), /at least one type with a weight above 0/)
  t.throws(() => parseMix(''), /at least one type/)
})

t.test('types are allocated in the exact proportions, reproducibly', async (t) => {
  const mix = parseMix('pageview=70,custom_event=20,pageleave=10')
  const types = allocateTypes(mix, 600)
  const count = (ty: string) => types.filter((x) => x === ty).length
  t.same([count('pageview'), count('custom_event'), count('pageleave')], [420, 120, 60])
  t.same(allocateTypes(mix, 600), types, 'same seed, same order')
  t.not(allocateTypes(mix, 600, 2).join(), types.join(), 'another seed, another order')
  t.not(types.slice(0, 420).every((x) => x === 'pageview'), true, 'shuffled, not in blocks')
})

t.test('largest remainders fill slots that do not divide evenly', async (t) => {
  const types = allocateTypes(parseMix('pageview=1,copy=1,error=1'), 100)
  t.equal(types.length, 100)
  const counts = ['pageview', 'copy', 'error'].map((ty) => types.filter((x) => x === ty).length).sort()
  t.same(counts, [33, 33, 34])
})
