import t from 'tap'
import { SessionIds, SESSION_ID, USER_ID, VISITOR_ID } from './session-ids.js'

const ODD = ['', 'a', 'k3j9x0aq7d2m', 'café', 'ÿ\u00ff\u0080', '中文', '😀', 'lone \ud800', '\udfff', 'x'.repeat(128), 'ü'.repeat(256)]

t.test('ids come back as they went in: Latin-1, wide, lone surrogates, empty, null', async (t) => {
  const ids = new SessionIds()
  const refs: [number, string, string | null, string | null][] = []
  for (const s of ODD) {
    for (const v of [null, ...ODD]) {
      const u = v === null ? s : null
      refs.push([ids.put(s, v, u), s, v, u])
    }
  }
  let wrong = 0
  for (const [ref, s, v, u] of refs) {
    if (ids.get(ref, SESSION_ID) !== s || ids.get(ref, VISITOR_ID) !== v || ids.get(ref, USER_ID) !== u) wrong++
    if (!ids.equals(ref, SESSION_ID, s) || (v !== null && !ids.equals(ref, VISITOR_ID, v))) wrong++
    if (ids.equals(ref, SESSION_ID, s + 'x') || (v === null && ids.equals(ref, VISITOR_ID, ''))) wrong++
  }
  t.equal(wrong, 0, `${refs.length} records read back, compared equal, and unequal to others`)
})

t.test('a changed field keeps the others', async (t) => {
  const ids = new SessionIds()
  let ref = ids.put('s1', 'v1', null)
  ref = ids.with(ref, USER_ID, 'ü-user')
  ref = ids.with(ref, VISITOR_ID, 'v2')
  t.equal(ids.get(ref, SESSION_ID), 's1')
  t.equal(ids.get(ref, VISITOR_ID), 'v2')
  t.equal(ids.get(ref, USER_ID), 'ü-user')
  ref = ids.with(ref, USER_ID, null)
  t.equal(ids.get(ref, USER_ID), null)
})

t.test('ids over the slab limit are kept as strings', async (t) => {
  const ids = new SessionIds()
  const long = 'é'.repeat(9000)
  const ref = ids.put('s', long, null)
  t.ok(ref < -1, 'an oversized reference, never −1')
  t.equal(ids.get(ref, VISITOR_ID), long)
  t.ok(ids.equals(ref, VISITOR_ID, long))
  const back = ids.with(ref, VISITOR_ID, 'short')
  t.ok(back >= 0, 'back in a slab once it fits')
  t.equal(ids.get(back, VISITOR_ID), 'short')
  t.equal(ids.get(back, SESSION_ID), 's')
})
