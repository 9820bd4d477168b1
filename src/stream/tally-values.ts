/**
 * Counts goals' conversions by attribute values from their day sets (goals/value-tallies.ts), for
 * the goals whose counts wait: a restored state (counts are never stored) and the goals a replay
 * of the log refilled (it knows no attributes). A day is counted a part of the hash space at a
 * time: the part's stored summaries are read first, then, in one synchronous step, the part's
 * sessions are taken afresh and counted with the attributes of that moment — the session table's
 * for a session in memory, else its stored summary's. From then on the fold keeps that part's
 * counts; parts not yet counted it leaves alone. What may change during a read: sessions convert
 * (the step takes the part afresh), leave or enter memory (a session neither in memory nor read is
 * read again), a goal is deleted or refilled (its counts are another object then: left), a day
 * dropped by retention (left).
 */
import type { SessionSummary } from '../schema/index.js'
import { TALLY_PART_BITS, type ValueTallies } from '../goals/index.js'
import { Words, hashKey } from '../sketch/index.js'
import { turnDue } from '../store/index.js'
import type { PartitionState } from './partition-state.js'
import { DIMENSIONS, summaryAttributes } from './session-attributes.js'

export type SummaryReader = (hks: string[]) => Promise<(SessionSummary | undefined)[]>

/** Counts every goal of the state whose counts wait; resolves false when stopped before the end. */
export async function tallyValues(state: PartitionState, read: SummaryReader, stopped: () => boolean = () => false): Promise<boolean> {
  // the days counted stay in memory while it runs (settled-days.ts)
  return state.settled.holding(() => tallyGoals(state, read, stopped))
}

async function tallyGoals(state: PartitionState, read: SummaryReader, stopped: () => boolean): Promise<boolean> {
  const words = new Words()
  const scratch = new Array<string | null>(DIMENSIONS).fill(null)
  for (;;) {
    const waiting = [...state.goals.keys()].filter((id) => state.talliesOf(id).rebuilding)
    if (waiting.length === 0) return true
    for (const id of waiting) {
      const tallies = state.tallies.get(id)
      for (;;) {
        const g = state.goals.get(id)
        // deleted, or refilled by a replay that counts it again when done
        if (g === undefined || state.tallies.get(id) !== tallies || tallies === undefined) break
        const day = g.days().find((d) => tallies.nextPart(d) >= 0)
        if (day === undefined) {
          // every held day counted, in this same turn: the fold keeps them from now on
          tallies.rebuilding = false
          break
        }
        if (g.isStored(day)) {
          // a settled day let go before its counts were asked for: back from the store, then counted
          await state.settled.load(id, [day])
          if (stopped()) return false
          continue
        }
        const part = tallies.nextPart(day)
        /** the attributes of the sessions read, null for one without a stored summary */
        const read_ = new Map<string, readonly (string | null)[] | null>()
        for (;;) {
          if (stopped()) return false
          // the part's sessions not in memory and not read yet
          g.partInto(day, day, part, TALLY_PART_BITS, words)
          const cold: string[] = []
          for (let i = 0; i < words.length; i += 4) {
            const hi = words.data[i]
            const lo = words.data[i + 1]
            if (state.summaries.slotOf(hi, lo) >= 0) continue
            const hk = hashKey(hi, lo)
            if (!read_.has(hk)) cold.push(hk)
          }
          if (cold.length > 0) {
            let stored: (SessionSummary | undefined)[]
            try {
              stored = await read(cold)
            } catch (err) {
              // the partition closing under the read: its store may be gone
              if (stopped()) return false
              throw err
            }
            cold.forEach((hk, i) => read_.set(hk, stored[i] ? summaryAttributes(stored[i]) : null))
          }
          // synchronous from here to the end of the part
          if (state.goals.get(id) !== g || state.tallies.get(id) !== tallies || g.dayMap(day) === undefined || tallies.nextPart(day) !== part) break
          g.partInto(day, day, part, TALLY_PART_BITS, words)
          if (countPart(state, words, tallies, day, read_, scratch)) {
            tallies.partCounted(day)
            break
          }
        }
        // the event loop's turns are shared with snapshots' encoding (store/encode-slices.ts)
        await turnDue()
      }
    }
  }
}

/**
 * Counts a part's sessions (`sessions`: their packed entries) with the attributes of now; false
 * (nothing counted) when one is neither in memory nor read: the caller reads again.
 */
function countPart(state: PartitionState, sessions: Words, tallies: ValueTallies, day: number, read: Map<string, readonly (string | null)[] | null>, scratch: (string | null)[]): boolean {
  const table = state.summaries
  const w = sessions.data
  for (let i = 0; i < sessions.length; i += 4) {
    if (table.slotOf(w[i], w[i + 1]) < 0 && !read.has(hashKey(w[i], w[i + 1]))) return false
  }
  for (let i = 0; i < sessions.length; i += 4) {
    const slot = table.slotOf(w[i], w[i + 1])
    if (slot >= 0) tallies.countInPart(day, table.attributes(slot, scratch))
    else {
      const values = read.get(hashKey(w[i], w[i + 1]))!
      if (values === null) tallies.countBlankInPart(day, w[i], w[i + 1])
      else tallies.countInPart(day, values)
    }
  }
  return true
}

