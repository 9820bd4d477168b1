import t from 'tap'
import { ABANDONED_MS, Claims, claimId } from './claims.js'

/** Claims whose entities are the owners listed in `entities`. */
function claims() {
  const entities = new Set<string>()
  return { entities, claims: new Claims((_space, _identity, owner) => entities.has(owner)) }
}

const ID = claimId('goal-key', 's|pageview|/x')

t.test('first writer wins in log order; later claims learn the holder', async (t) => {
  const { claims: c } = claims()
  c.await('b')
  c.apply(ID, { owner: 'a' })
  c.apply(ID, { owner: 'b' })
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'a')
  t.equal(c.outcome('b'), 'a', 'b lost to a')
  t.equal(c.outcome('b'), undefined, 'an outcome is read once')
})

t.test('malformed claim records change nothing', async (t) => {
  const { claims: c } = claims()
  c.apply(ID, { owner: 42 })
  c.apply('nospace:x', { owner: 'a' })
  c.apply(ID, 'a')
  t.equal(c.holder('goal-key', 's|pageview|/x'), undefined)
})

t.test('an abandoned claim is taken over only while its entity is still missing, in log order', async (t) => {
  const { claims: c, entities } = claims()
  c.apply(ID, { owner: 'a' }, 0)
  t.equal(c.abandoned('goal-key', 's|pageview|/x', ABANDONED_MS - 1), false, 'not before ABANDONED_MS')
  t.equal(c.abandoned('goal-key', 's|pageview|/x', ABANDONED_MS), true)
  entities.add('a')
  t.equal(c.abandoned('goal-key', 's|pageview|/x', ABANDONED_MS), false, 'not once its entity exists')
  c.apply(ID, { owner: 'b', over: 'a' }, ABANDONED_MS)
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'a', 'a takeover applied after the entity loses')
  entities.delete('a')
  c.apply(ID, { owner: 'c', over: 'x' }, ABANDONED_MS)
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'a', 'a takeover of another holder loses')
  c.apply(ID, { owner: 'c', over: 'a' }, ABANDONED_MS)
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'c')
})

t.test('a tombstone frees only a holder without entity; an entity delete frees its own identity', async (t) => {
  const { claims: c, entities } = claims()
  c.apply(ID, { owner: 'a' })
  entities.add('a')
  c.apply(ID, null)
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'a', 'the entity still exists')
  c.entityDeleted('goal-key', 's|pageview|/x', 'other')
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'a', 'another entity\'s delete frees nothing')
  entities.delete('a')
  c.entityDeleted('goal-key', 's|pageview|/x', 'a')
  t.equal(c.holder('goal-key', 's|pageview|/x'), undefined)
  c.apply(ID, { owner: 'b' })
  c.apply(ID, null)
  t.equal(c.holder('goal-key', 's|pageview|/x'), undefined, 'a writer that gave up frees it')
  c.entityWritten('goal-key', 's|pageview|/x', 'old')
  c.entityWritten('goal-key', 's|pageview|/x', 'older-duplicate')
  t.equal(c.holder('goal-key', 's|pageview|/x'), 'old', 'the first entity written holds it')
})
