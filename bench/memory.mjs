/**
 * Memory per converted session held in GoalDays state, and per site-day session counter, measured
 * in a child process run with --expose-gc (memory-child.mjs) so that nothing else the runner
 * holds blurs the deltas.
 */
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SERVER_CORE, log, nextMessage, start, stop } from './lib/proc.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const HEAP_MB = 16_384
const GOALS = 20
const DAYS = 30
const EXACT_THRESHOLD = 8192

/** @param o { sizes, partitions, multiDayShare } */
export async function benchMemory(o) {
  const settings = { sizes: o.sizes, partitions: o.partitions, goals: GOALS, days: DAYS, multiDayShare: o.multiDayShare, exactThreshold: EXACT_THRESHOLD }
  log(`memory: ${o.sizes.map((n) => n.toLocaleString('en-US')).join(', ')} converted sessions; site-day counters; hot summaries`)
  const child = start(
    [process.execPath, '--expose-gc', `--max-old-space-size=${HEAP_MB}`, join(HERE, 'memory-child.mjs'), JSON.stringify(settings)],
    { core: SERVER_CORE, ipc: true },
  )
  const onProgress = (m) => m?.type === 'progress' && log(`  ${m.text}`)
  child.on('message', onProgress)
  try {
    const r = await nextMessage(child, 'result')
    return { setup: settings, goalDays: r.goalDays, counters: r.counters, summaries: r.summaries }
  } finally {
    child.off('message', onProgress)
    await stop(child)
  }
}
