/** Reads back what `goalpost replay` rebuilt. */
import { join } from 'node:path'
import type { Test } from 'tap'
import { StateStore } from '../../dist/store/index.js'
import { PartitionState } from '../../dist/stream/index.js'
import { goalList } from '../../dist/query/index.js'
import { initHash } from '../../dist/sketch/index.js'
import type { Goal, GoalsAnswer } from './api.js'

/** The goals answer of the state `goalpost replay` wrote into `out`, read back from its store. */
export async function rebuiltGoals(t: Test, out: string, partitions: number, site: string, goals: Goal[]): Promise<GoalsAnswer> {
  await initHash()
  const store = await StateStore.open(join(out, 'state'))
  t.teardown(() => store.close())
  const parts = []
  for (let p = 0; p < partitions; p++) {
    const state = new PartitionState(p, 100_000)
    await store.loadPartition(state)
    parts.push(state)
  }
  const siteRecord = { site_id: site, domain: null, timezone: 'UTC', created_at: '' }
  return goalList(parts, siteRecord, goals, 7)
}

