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

/** The side indexes' stamps of days [from, to] (PartitionState.acrossStamps): what a kept sum over sessions on those days read. */
export function acrossStampsOf(state: PartitionState, from: number, to: number): number[] {
  const out: number[] = []
  for (let day = from; day <= to; day++) out.push(state.acrossStamps.get(day) ?? 0)
  return out
}

/** Whether a sum kept under `kept`'s stamps and generation still holds against `stamps` now. */
export const stillHolds = (state: PartitionState, kept: { stamps: readonly number[]; generation: number }, stamps: readonly number[]): boolean =>
  kept.generation === state.acrossGeneration && sameStamps(kept.stamps, stamps)
