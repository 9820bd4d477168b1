import t from 'tap'
import { hash64, initHash } from '../sketch/index.js'
import type { LoggedEvent } from '../schema/index.js'
import { GoalIndex } from './goal-index.js'
import { PartitionState } from './partition-state.js'

await initHash()

const T0 = Date.UTC(2026, 10, 20, 12)
const DAY = Math.floor(T0 / 86_400_000)

t.test('memory() weighs each kind of state, and what retention drops leaves it', async (t) => {
  const state = new PartitionState(0, 64)
  const goals = new GoalIndex()
  const weigh = () => ({ summaries: state.memory('summaries'), goals: state.memory('goals'), counters: state.memory('counters') })
  const empty = weigh()
  t.same({ goals: empty.goals, counters: empty.counters }, { goals: 0, counters: 0 }, 'nothing held yet')
  for (let i = 0; i < 5000; i++) {
    const e: LoggedEvent = { type: 'pageview', site_id: 'shop', session_id: `s${i}`, path: `/p/${i % 50}`, ts: T0 + i, received_at: T0 }
    const { hi, lo } = hash64(`shop\u0000s${i}`)
    state.fold(e, hi, lo, { timezone: 'UTC' }, goals)
    if (i % 2 === 0) state.recordConversion('g', hi, lo, DAY, T0 + i)
  }
  const full = weigh()
  t.equal(full.summaries, state.summaries.memoryBytes())
  t.ok(full.summaries > 5000 * 64, `summaries: ${full.summaries} B for 5 000 sessions`)
  t.ok(full.goals >= 2500 * 12, `goals: ${full.goals} B for 2 500 conversions`)
  // a day's counter past 64 sessions is a 16 KiB sketch; the breakdown counters of 50 entry pages hold the rest
  t.ok(full.counters > 16 * 1024, `counters: ${full.counters} B`)
  state.dropBefore('shop', ['g'], DAY + 1)
  const after = weigh()
  t.ok(after.goals < full.goals / 10, `goals after the day is dropped: ${after.goals} B`)
  t.ok(after.counters < full.counters / 10, `counters after the day is dropped: ${after.counters} B`)
})
