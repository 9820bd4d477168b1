import cliProgress from 'cli-progress'
import type { LoadStats } from './load-stats.js'

export interface Progress {
  stop(): void
}

const TICK_MS = 250

/**
 * A bar over the run's seconds with the rate so far, redrawn a few times a second; on a
 * terminal-less stderr (CI logs) a line every few seconds instead.
 */
export function loadProgress(seconds: number, stats: LoadStats, enabled: boolean): Progress {
  if (!enabled) return { stop() {} }
  const bar = new cliProgress.SingleBar({
    format: ' {bar} {value}/{total} s | {rate} acked/s | {acked} events acked | {failed} failed',
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    stream: process.stderr,
  }, cliProgress.Presets.shades_classic)
  const started = performance.now()
  const payload = () => {
    const elapsed = (performance.now() - started) / 1000
    return { rate: Math.round(stats.okEvents / Math.max(elapsed, 0.001)).toLocaleString('en-US'), acked: stats.okEvents.toLocaleString('en-US'), failed: stats.failures }
  }
  bar.start(Math.round(seconds), 0, payload())
  const timer = setInterval(() => bar.update(Math.min(Math.round(seconds), Math.floor((performance.now() - started) / 1000)), payload()), TICK_MS)
  return {
    stop() {
      clearInterval(timer)
      bar.update(Math.round(seconds), payload())
      bar.stop()
    },
  }
}
