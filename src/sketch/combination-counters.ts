import { SessionCounter } from './session-counter.js'

type Level = Map<string | null, Level | SessionCounter>

/**
 * Session counters keyed by a combination of a few values (null among them), as nested Maps: a
 * lookup is a Map get per value with strings the caller already holds (their hashes cached), no
 * key built per update. The store names a combination by `combinationKey`.
 *
 * @example
 * const c = new CombinationCounters(2)
 * c.counter(['google.com', null], [0, 1], 1024).add(h.hi, h.lo)
 */
export class CombinationCounters {
  readonly depth: number
  readonly #root: Level = new Map()

  constructor(depth: number) {
    this.depth = depth
  }

  /** The counter of the combination (values[at[0]], values[at[1]], …), created empty when absent. */
  counter(values: readonly (string | null)[], at: readonly number[], threshold: number): SessionCounter {
    let level = this.#root
    const last = at.length - 1
    for (let i = 0; i < last; i++) {
      const v = values[at[i]]
      let next = level.get(v) as Level | undefined
      if (!next) level.set(v, (next = new Map()))
      level = next
    }
    const v = values[at[last]]
    let c = level.get(v) as SessionCounter | undefined
    if (!c) level.set(v, (c = new SessionCounter(threshold)))
    return c
  }

  /** The counter of the combination, or undefined. */
  get(values: readonly (string | null)[], at: readonly number[]): SessionCounter | undefined {
    let node: Level | SessionCounter | undefined = this.#root
    for (const i of at) {
      node = (node as Level).get(values[i])
      if (node === undefined) return undefined
    }
    return node as SessionCounter
  }

  /** Puts a counter under a combination (its values in order). */
  set(combination: readonly (string | null)[], c: SessionCounter): void {
    let level = this.#root
    for (let i = 0; i < combination.length - 1; i++) {
      let next = level.get(combination[i]) as Level | undefined
      if (!next) level.set(combination[i], (next = new Map()))
      level = next
    }
    level.set(combination[combination.length - 1], c)
  }

  /** Calls `fn` with every combination (a fresh array) and its counter. */
  forEach(fn: (combination: (string | null)[], c: SessionCounter) => void): void {
    const path: (string | null)[] = []
    const walk = (level: Level, depth: number): void => {
      for (const [v, next] of level) {
        path[depth] = v
        if (depth === this.depth - 1) fn(path.slice(), next as SessionCounter)
        else walk(next as Level, depth + 1)
      }
    }
    walk(this.#root, 0)
  }
}

const SEP = '\u0000'
const NULL_PART = '\u0001'

/** one value of a combination's key: a mark for null, else the value with the separators escaped */
function part(v: string | null): string {
  if (v === null) return NULL_PART
  const special = v.includes(SEP) || v.includes(NULL_PART)
  return '\u0002' + (special ? v.replaceAll(NULL_PART, '\u0001\u0003').replaceAll(SEP, '\u0001\u0004') : v)
}

function unpart(p: string): string | null {
  if (p === NULL_PART) return null
  const v = p.slice(1)
  return v.includes(NULL_PART) ? v.replaceAll('\u0001\u0004', SEP).replaceAll('\u0001\u0003', NULL_PART) : v
}

/** A combination as one string (for store keys): any text, null included, comes back unchanged. */
export const combinationKey = (combination: readonly (string | null)[]): string => combination.map(part).join(SEP)

/** The inverse of combinationKey. */
export const parseCombination = (key: string): (string | null)[] => key.split(SEP).map(unpart)
