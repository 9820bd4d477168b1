import t from 'tap'
import { ValueTallies } from './value-tallies.js'

const DAY = 20_000
const counts = (tallies: ValueTallies): Map<string | null, number> => {
  const into = new Map<string | null, number>()
  tallies.sumInto(DAY, 0, 0, (c) => c[0], into)
  return into
}
/** a day counted again from its set, a part at a time: every session in part 0 here */
function recount(tallies: ValueTallies, sessions: { hi: number; lo: number; values: (string | null)[] | null }[]): void {
  for (let part = tallies.nextPart(DAY); part >= 0; part = tallies.nextPart(DAY)) {
    if (part === 0) {
      for (const s of sessions) {
        if (s.values === null) tallies.countBlankInPart(DAY, s.hi, s.lo)
        else tallies.countInPart(DAY, s.values)
      }
    }
    tallies.partCounted(DAY)
  }
}

t.test('a session counted without values moves to its values when its conversion is folded again, and not before', (t) => {
  const tallies = new ValueTallies([[0], [1]], true)
  // small hashes: all in the hash space's first part
  const known = { hi: 1, lo: 1, values: ['a.example', 'DE'] }
  const blank = { hi: 2, lo: 2, values: null }
  recount(tallies, [known, blank])
  tallies.rebuilding = false
  t.same(Object.fromEntries(counts(tallies)), { 'a.example': 1, null: 1 }, 'counted: one under its values, one under none')
  t.ok(tallies.hasBlank, 'one is blank')
  t.equal(tallies.versionOf(DAY), undefined, 'a day with a blank session is not stored')
  // its attributes change before its conversion comes again: its count is not under `before`
  tallies.move(DAY, ['x.example', 'FR'], ['b.example', 'FR'], blank.hi, blank.lo)
  t.same(Object.fromEntries(counts(tallies)), { 'a.example': 1, null: 1 }, 'a move leaves the blank session alone')
  tallies.fillBlank(DAY, ['b.example', 'FR'], blank.hi, blank.lo)
  t.same(Object.fromEntries(counts(tallies)), { 'a.example': 1, 'b.example': 1 }, 'filled: under its values')
  t.notOk(tallies.hasBlank, 'nothing blank')
  t.not(tallies.versionOf(DAY), undefined, 'the day may be stored again')
  tallies.fillBlank(DAY, ['c.example', 'FR'], blank.hi, blank.lo)
  t.same(Object.fromEntries(counts(tallies)), { 'a.example': 1, 'b.example': 1 }, 'a second fill changes nothing')
  tallies.fillBlank(DAY, ['c.example', 'FR'], known.hi, known.lo)
  t.same(Object.fromEntries(counts(tallies)), { 'a.example': 1, 'b.example': 1 }, 'nor one of a session never blank')
  t.end()
})

t.test('retention drops blank sessions with their day', (t) => {
  const tallies = new ValueTallies([[0]], true)
  recount(tallies, [{ hi: 3, lo: 3, values: null }])
  tallies.rebuilding = false
  tallies.dropBefore(DAY + 1)
  t.notOk(tallies.hasBlank)
  t.end()
})
