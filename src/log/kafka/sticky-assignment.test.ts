import t from 'tap'
import { assignSticky } from './sticky-assignment.js'

const sizes = (m: Map<string, number[]>): number[] => [...m.values()].map((l) => l.length).sort()
const all = (m: Map<string, number[]>): number[] => [...m.values()].flat().sort((a, b) => a - b)

t.test('a single member gets every partition', async (t) => {
  t.same(assignSticky([{ id: 'a', owned: [] }], 4).get('a'), [0, 1, 2, 3])
})

t.test('members split the partitions evenly, each partition once', async (t) => {
  for (const [n, p] of [[2, 4], [3, 4], [3, 8], [5, 3], [4, 16]]) {
    const members = Array.from({ length: n }, (_, i) => ({ id: `m${i}`, owned: [] }))
    const got = assignSticky(members, p)
    t.same(all(got), Array.from({ length: p }, (_, i) => i), `${n} members, ${p} partitions: all assigned once`)
    const s = sizes(got)
    t.ok(s[s.length - 1] - s[0] <= 1, `${n} members, ${p} partitions: balanced ${s}`)
  }
})

t.test('a joining member takes only what balance requires from the owner', async (t) => {
  const got = assignSticky([{ id: 'a', owned: [0, 1, 2, 3] }, { id: 'b', owned: [] }], 4)
  t.same(got.get('a'), [0, 1])
  t.same(got.get('b'), [2, 3])
})

t.test('a leaving member\'s partitions go to the others, who keep theirs', async (t) => {
  const got = assignSticky([{ id: 'a', owned: [0, 3] }, { id: 'c', owned: [2, 5] }], 6)
  t.same(got.get('a')!.filter((p) => [0, 3].includes(p)), [0, 3], 'a keeps its own')
  t.same(got.get('c')!.filter((p) => [2, 5].includes(p)), [2, 5], 'c keeps its own')
  t.same(all(got), [0, 1, 2, 3, 4, 5])
})

t.test('claims on the same partition, or out of range, are ignored', async (t) => {
  const got = assignSticky([{ id: 'a', owned: [0, 1, 9] }, { id: 'b', owned: [0, 1] }], 2)
  t.same(all(got), [0, 1])
  t.same(sizes(got), [1, 1])
})
