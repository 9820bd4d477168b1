/**
 * The pass that links sessions across a site's goals after a replay of the log (a new goal's
 * backfill, a site's re-bucketing): the replay folds without the sessions' spans, so it cannot tell
 * the live fold's way (PartitionState.linkAcross) which sessions converted the site's goals on
 * more than one day. This pass finds them from the goals' day sets alone and indexes each in every
 * goal it converted, with its days. It takes the hash space a part at a time (U64Map.partInto),
 * so a part's sessions of every goal and day are seen together, and lets other work run between
 * turns: what the fold adds meanwhile it links itself, and the pass only ever adds days that are
 * held, so the two never undo each other.
 */
import { U64Map, Words } from '../sketch/index.js'
import type { PartitionState } from './partition-state.js'

/**
 * entries (all goals, all days) per part: a part's table of 64 Ki entries stays in cache, and fewer,
 * larger parts spare the per-part cost of reaching into every goal's every day (50 × 30 sets here)
 */
const ENTRIES_PER_PART = 65_536
const MAX_BITS = 16
const SLICE_MS = 8
/** a session seen on more than one day (days are far below it) */
const SEVERAL = 0xffffffff

/** Links the sessions of `goalIds` across them; resolves false when stopped before the end. */
export async function linkSessionsAcross(state: PartitionState, goalIds: readonly string[], stopped: () => boolean = () => false): Promise<boolean> {
  // every day of every goal is read: the settled ones come back from the store, and stay while it runs
  return state.settled.holding(async () => {
    await state.settled.loadRange(goalIds)
    return linkParts(state, goalIds, stopped)
  })
}

async function linkParts(state: PartitionState, goalIds: readonly string[], stopped: () => boolean): Promise<boolean> {
  const goals = () => goalIds.flatMap((id) => {
    const g = state.goals.get(id)
    return g === undefined ? [] : [{ id, g }]
  })
  let entries = 0
  for (const { g } of goals()) entries += g.size
  let bits = 0
  while (bits < MAX_BITS && entries / 2 ** bits > ENTRIES_PER_PART) bits++
  const seen = new U64Map((1.5 * entries) / 2 ** bits, bits)
  const words = new Words()
  let started = performance.now()
  for (let part = 0; part < 2 ** bits; part++) {
    if (performance.now() - started >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (stopped()) return false
      started = performance.now()
    }
    // goals are taken afresh each part: one deleted meanwhile is gone from the state
    const held = goals()
    seen.clear()
    let several = false
    for (const { g } of held) {
      g.partInto(-Infinity, Infinity, part, bits, words)
      const w = words.data
      for (let i = 0; i < words.length; i += 4) {
        const was = seen.get(w[i], w[i + 1])
        if (was === undefined) seen.set(w[i], w[i + 1], w[i + 3])
        else if (was !== w[i + 3] && was !== SEVERAL) {
          seen.set(w[i], w[i + 1], SEVERAL)
          several = true
        }
      }
    }
    if (!several) continue
    const day = [0]
    for (const { id, g } of held) {
      g.partInto(-Infinity, Infinity, part, bits, words)
      const w = words.data
      for (let i = 0; i < words.length; i += 4) {
        if (seen.get(w[i], w[i + 1]) !== SEVERAL) continue
        day[0] = w[i + 3]
        state.indexAcross(id, w[i], w[i + 1], day)
      }
    }
  }
  return true
}
