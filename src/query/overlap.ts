/**
 * Two goals' overlap over a window: sessions that completed both, either, or one only. Each owner
 * joins its partition's sessions of both goals a part of the hash space at a time (parts.ts): a
 * part's sessions of goal a go into a small set, then goal b's are looked up in it. A session
 * converting on several days comes once per day and the set keeps it once, so a, b and both are
 * distinct sessions, counted in the same step. Sessions never span partitions, so the partitions'
 * counts add up exactly.
 */
import type { GoalOverlap, PartialQuery } from '../schema/index.js'
import type { PartitionState } from '../stream/index.js'
import { U64Map, Words } from '../sketch/index.js'
import { partBits, runAll, type PartedQuery } from './parts.js'

type OverlapQuery = Extract<PartialQuery, { kind: 'overlap' }>

export interface OverlapPartial {
  a: number
  b: number
  both: number
}

const IN_A = 1
const IN_B = 2

/**
 * One partition's overlap, in parts; `goals`: the sets of a and b to read, if taken already;
 * `parts`: the bits of the parts, when the caller needs given ones.
 */
export function overlapParts(
  state: PartitionState, q: OverlapQuery, goals = [state.goals.get(q.a), state.goals.get(q.b)], parts?: number,
): PartedQuery<OverlapPartial> {
  const out: OverlapPartial = { a: 0, b: 0, both: 0 }
  const { from, to } = q.window
  const a = goals[0]
  const b = q.a === q.b ? undefined : goals[1]
  const sizeA = a?.entriesIn(from, to) ?? 0
  const sizeB = b?.entriesIn(from, to) ?? 0
  const bits = parts ?? partBits(Math.max(sizeA, sizeB))
  const seen = new U64Map((1.5 * (sizeA + sizeB)) / 2 ** bits, bits)
  const words = new Words()
  return {
    bits,
    step(part) {
      seen.clear()
      if (a !== undefined) {
        a.partInto(from, to, part, bits, words)
        const w = words.data
        for (let i = 0; i < words.length; i += 4) seen.set(w[i], w[i + 1], IN_A)
      }
      const inA = seen.size
      out.a += inA
      if (q.a === q.b) {
        out.b += inA
        out.both += inA
        return
      }
      if (b === undefined) return
      b.partInto(from, to, part, bits, words)
      const w = words.data
      for (let i = 0; i < words.length; i += 4) {
        const was = seen.get(w[i], w[i + 1])
        if (was === undefined) {
          seen.set(w[i], w[i + 1], IN_B)
          out.b++
        } else if (was === IN_A) {
          seen.set(w[i], w[i + 1], IN_A | IN_B)
          out.b++
          out.both++
        }
      }
    },
    result: () => out,
  }
}

/** The overlap of some partitions, computed at once. */
export function overlapPartial(parts: Iterable<PartitionState>, q: OverlapQuery): OverlapPartial {
  return mergeOverlaps([...parts].map((state) => runAll(overlapParts(state, q))))
}

export function mergeOverlaps(partials: OverlapPartial[]): OverlapPartial {
  const out: OverlapPartial = { a: 0, b: 0, both: 0 }
  for (const p of partials) {
    out.a += p.a
    out.b += p.b
    out.both += p.both
  }
  return out
}

export function overlapBody(q: OverlapQuery, merged: OverlapPartial): GoalOverlap {
  const { a, b, both } = merged
  return {
    a: { id: q.a, conversions: a },
    b: { id: q.b, conversions: b },
    both,
    a_only: a - both,
    b_only: b - both,
    either: a + b - both,
  }
}
