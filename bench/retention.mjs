/**
 * Memory against retained days, before and after settled days' sets leave memory for the store
 * (PartitionTask.evictSettled), and what a question on settled days costs read back from the store
 * (cold) against in memory (warm). One child per count of retained days (retention-child.mjs),
 * each run with --expose-gc and pinned to the server core, so that no run's memory (RSS above all:
 * freed memory is not always given back) blurs the next one's.
 */
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SERVER_CORE, log, nextMessage, start, stop } from './lib/proc.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const HEAP_MB = 8192
/** events a log append and fold, and batches between snapshots (the task snapshots on its own as well) */
const BATCH = 5000
const SNAPSHOT_EVERY = 50
/** the hot session summaries: capped while folding; after the build every one leaves (all written) */
const MAX_HOT_SESSIONS = 200_000
const HOT_SESSION_MS = 60_000
/** the service's default (config/default.json) */
const EXACT_THRESHOLD = 1024

/** @param o { days: number[] (ascending), sessionsPerDay } */
export async function benchRetention(o) {
  const setup = {
    days: o.days, sessionsPerDay: o.sessionsPerDay, batch: BATCH, snapshotEvery: SNAPSHOT_EVERY,
    maxHotSessions: MAX_HOT_SESSIONS, hotSessionMs: HOT_SESSION_MS, exactThreshold: EXACT_THRESHOLD,
    // glibc's malloc settings the children inherit (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, …): they decide what RSS gives back
    mallocEnv: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_'))),
  }
  log(`retention: ${o.days.join(', ')} retained days × ${o.sessionsPerDay.toLocaleString('en-US')} sessions a day, one site, 3 goals, a child per count of days`)
  const runs = []
  for (const days of o.days) {
    const settings = { ...setup, days }
    const child = start(
      [process.execPath, '--expose-gc', `--max-old-space-size=${HEAP_MB}`, join(HERE, 'retention-child.mjs'), JSON.stringify(settings)],
      { core: SERVER_CORE, ipc: true },
    )
    const onProgress = (m) => m?.type === 'progress' && log(`  ${m.text}`)
    child.on('message', onProgress)
    try {
      const r = await nextMessage(child, 'result')
      delete r.type
      runs.push(r)
    } finally {
      child.off('message', onProgress)
      await stop(child)
    }
  }
  const steps = runs.slice(1).map((r, i) => growth(runs[i], r))
  return { setup, runs, growth: runs.length > 1 ? growth(runs[0], runs[runs.length - 1]) : undefined, steps }
}

/** bytes per added retained day from run `a` to run `b` (more days), before and after eviction */
function growth(a, b) {
  const span = b.days - a.days
  const per = (f) => ({ before: (f(b.before) - f(a.before)) / span, after: (f(b.after) - f(a.after)) / span })
  return {
    from: a.days, to: b.days,
    goals: per((m) => m.kinds.goals),
    total: per((m) => m.total),
    rss: per((m) => m.rss),
    rssAnon: per((m) => m.rssAnon),
    daySets: per((m) => m.goals.daySets),
    hourSets: per((m) => m.goals.hourSets),
    times: per((m) => m.goals.times),
    counters: per((m) => m.kinds.counters),
    filter: per((m) => m.kinds.filter),
    summaries: per((m) => m.kinds.summaries),
  }
}
