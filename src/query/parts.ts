/**
 * Queries that join session sets (overlap, funnels) walk every converted session of a window:
 * millions at a busy site. They take a partition's state a part of the hash space at a time
 * (U64Map.partInto): a part's sessions fit in cache, so the join runs on small tables, and a
 * step can end and let other work run.
 *
 * A step reads every day of each session of its part, so the fold, which may run between steps,
 * never shows a query half a session: each session is counted once, as it stood at its step. A
 * query keeps the goals' sets it took at its start, so a goal deleted meanwhile is still read
 * whole; a site re-bucketed meanwhile is caught after the walk, and the query asked again
 * (InteractiveQueries.local).
 */
import type { GoalDays } from '../goals/index.js'
import { U64Map, Words } from '../sketch/index.js'

/** a query over one partition, cut into 2^bits parts of the hash space */
export interface PartedQuery<P> {
  readonly bits: number
  /** computes one part; parts may come in any order, each once */
  step(part: number): void
  /** the partial once every part has run */
  result(): P
}

/** sessions per part that keep a part's tables in cache */
const SESSIONS_PER_PART = 2048
const MAX_BITS = 16
/** how long one turn of the event loop runs steps before letting other work run */
const SLICE_MS = 8

/** The parts for a walk over `sessions` entries: about SESSIONS_PER_PART each. */
export function partBits(sessions: number): number {
  let bits = 0
  while (bits < MAX_BITS && sessions / 2 ** bits > SESSIONS_PER_PART) bits++
  return bits
}

/** Runs every part now (tests and benchmarks; the API uses `runInSlices`). */
export function runAll<P>(q: PartedQuery<P>): P {
  for (let part = 0; part < 2 ** q.bits; part++) q.step(part)
  return q.result()
}

/**
 * The event loop's turns one query's work runs in, about `sliceMs` each. Walks of one query share
 * them: many walks that are each short (a day each) would otherwise follow one another in a single
 * turn, their awaits settling without ever letting other work run.
 */
export class Turns {
  readonly sliceMs: number
  #started = performance.now()

  constructor(sliceMs = SLICE_MS) {
    this.sliceMs = sliceMs
  }

  /** whether this turn has run its time */
  get due(): boolean {
    return performance.now() - this.#started >= this.sliceMs
  }

  /** Lets other work run, and starts the next turn. */
  async next(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve))
    this.#started = performance.now()
  }
}

/** Runs the parts in turns of the event loop (`turns`, or turns of `turns` ms). */
export async function runInSlices<P>(q: PartedQuery<P>, turns: Turns | number = new Turns()): Promise<P> {
  const t = typeof turns === 'number' ? new Turns(turns) : turns
  for (let part = 0; part < 2 ** q.bits; part++) {
    if (t.due) await t.next()
    q.step(part)
  }
  return q.result()
}

/** Calls `fn` once for each session that completed `goal` on a day in [from, to], a part at a time. */
export function eachSession(goal: GoalDays, from: number, to: number, fn: (hi: number, lo: number) => void): PartedQuery<void> {
  const bits = partBits(goal.size)
  const seen = new U64Map((1.5 * goal.size) / 2 ** bits, bits)
  const words = new Words()
  return {
    bits,
    step(part) {
      seen.clear()
      goal.partInto(from, to, part, bits, words)
      const w = words.data
      for (let i = 0; i < words.length; i += 4) if (seen.setMin(w[i], w[i + 1], 0)) fn(w[i], w[i + 1])
    },
    result: () => undefined,
  }
}
