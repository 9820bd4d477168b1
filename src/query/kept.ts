/**
 * What a partition's queries keep between questions (per-day joins, sums of settled sessions), each
 * kind in a bounded cache per partition state, checked against the stamps it was computed under.
 */
import { LRUCache } from 'lru-cache'
import type { PartitionState } from '../stream/index.js'

/**
 * A cache per partition state, made on first use and gone with the state.
 *
 * @example
 * const joinsOf = keptPerPartition<Map<number, DayJoin>>(4096)
 * joinsOf(state).get(key)
 */
export function keptPerPartition<V extends object>(max: number): (state: PartitionState) => LRUCache<string, V> {
  const caches = new WeakMap<PartitionState, LRUCache<string, V>>()
  return (state) => {
    let cache = caches.get(state)
    if (cache === undefined) caches.set(state, (cache = new LRUCache<string, V>({ max })))
    return cache
  }
}

export const sameStamps = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((s, i) => s === b[i])
