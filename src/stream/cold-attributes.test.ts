import t from 'tap'
import type { SessionSummary } from '../schema/index.js'
import { initHash } from '../sketch/index.js'
import { ColdAttributes } from './cold-attributes.js'

t.before(initHash)

const summary = (country: string): SessionSummary => ({ country } as unknown as SessionSummary)
const [hi, lo] = [12, 34]

t.test('a read is kept until the session comes back into memory or leaves it', async (t) => {
  const c = new ColdAttributes()
  t.equal(c.get(hi, lo), undefined)
  const [values] = await c.read([hi, lo], async () => [summary('DE')])
  t.equal(values[9], 'DE')
  t.equal(c.get(hi, lo)?.[9], 'DE', 'kept')
  c.passed(hi, lo)
  t.equal(c.get(hi, lo), undefined, 'forgotten at a passage')
  const [none] = await c.read([hi, lo], async () => [undefined])
  t.same(none, new Array(10).fill(null), 'no summary: no values')
})

t.test('a read that a passage overtook is not kept', async (t) => {
  const c = new ColdAttributes()
  let release!: () => void
  const reading = c.read([hi, lo], () => new Promise((resolve) => (release = () => resolve([summary('FR')]))))
  c.passed(hi, lo)
  release()
  const [values] = await reading
  t.equal(values[9], 'FR', 'answered')
  t.equal(c.get(hi, lo), undefined, 'but not kept: the session may have changed meanwhile')
  await c.read([hi, lo], async () => [summary('FR')])
  t.equal(c.get(hi, lo)?.[9], 'FR', 'the next read is kept again')
})
