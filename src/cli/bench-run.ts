import type { BenchPlan } from './bench-plan.js'
import { setUpSites } from './bench-setup.js'
import { readCounts, waitCounted, type SiteCounts, type Verification } from './bench-verify.js'
import { httpSender } from './http-load.js'
import { kafkaSender } from './kafka-load.js'
import { loggedRecordEncoder } from './kafka-record.js'
import { runLoop, type Answer } from './load-loop.js'
import { LoadStats, type LoadResult } from './load-stats.js'
import { loadProgress } from './progress.js'
import { SyntheticStream } from './synthetic-stream.js'
import { Tally, type SiteExpectation } from './tally.js'

export interface BenchResult {
  load: LoadResult
  expected: SiteExpectation[]
  verification: Verification | { skipped: string }
}

/** Sets up, drives the stream for the planned time, then checks the service counted what it acknowledged. */
export async function runBench(plan: BenchPlan, signal?: AbortSignal, note: (line: string) => void = () => {}): Promise<BenchResult> {
  const stream = new SyntheticStream(plan.shape)
  if (plan.setup) {
    note(`creating ${plan.shape.siteIds.length} site(s) with ${plan.shape.goals.length} goal(s) each`)
    await setUpSites(plan.setup.url, plan.setup.token, plan.shape.siteIds, plan.shape.goals)
  }
  const verify = plan.verify
  let before: SiteCounts[] | undefined
  if ('token' in verify) before = await readCounts(verify.url, verify.token, plan.shape.siteIds, plan.shape.goals)

  const sender = await openSender(plan, stream)
  const stats = new LoadStats()
  const tally = new Tally(stream)
  const progress = loadProgress(plan.durationMs / 1000, stats, plan.progress)
  let seconds: number
  try {
    seconds = await runLoop({
      concurrency: plan.connections, durationMs: plan.durationMs, eventsPerRequest: plan.target.batch,
      stats, send: sender.send, onAck: (first, n) => tally.add(first, n), signal,
    })
  } finally {
    progress.stop()
    await sender.close()
  }
  const expected = tally.expected()
  let verification: BenchResult['verification']
  if ('token' in verify) {
    note('waiting for the service to count what it acknowledged')
    verification = await waitCounted(verify.url, verify.token, plan.shape.goals, expected, before!, verify.timeoutMs)
  } else {
    verification = verify
  }
  return { load: stats.result(seconds), expected, verification }
}

async function openSender(plan: BenchPlan, stream: SyntheticStream): Promise<{ send(first: number, n: number): Promise<Answer>; close(): unknown }> {
  const t = plan.target
  if (t.kind === 'http') return httpSender({ url: t.url, batch: t.batch, ...(t.key ? { key: t.key } : {}), connections: plan.connections, timeoutMs: plan.timeoutMs }, stream)
  const encode = await loggedRecordEncoder(plan.shape.siteIds, plan.retentionDays)
  return kafkaSender({ brokers: t.brokers, prefix: t.prefix, timeoutMs: plan.timeoutMs }, stream, encode)
}
