/**
 * `goalpost replay`: rebuilds partition state from the events topic alone into a data directory's
 * state store, with a progress bar, and reports how fast the fold went. The log and configuration
 * come from the node settings (GOALPOST_LOG, GOALPOST_KAFKA_*, or GOALPOST_DATA_DIR's embedded log).
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import cliProgress from 'cli-progress'
import type { Config } from '../config/index.js'
import { openLog } from '../log/index.js'
import { Catalog } from '../catalog/index.js'
import { StateStore } from '../store/index.js'
import { initHash } from '../sketch/index.js'
import { rebuild, type RebuildResult } from '../stream/index.js'

export interface ReplayOptions {
  /** the directory whose `state/` receives the rebuilt state; it must not hold state yet */
  out: string
  /** fold only records stamped at or after this instant */
  since?: Date
  /** draw a progress bar (a terminal); else one line per 10 % */
  bar: boolean
  print(line: string): void
}

export async function replay(config: Config, o: ReplayOptions): Promise<RebuildResult> {
  const target = join(o.out, 'state')
  if (existsSync(target) && readdirSync(target).length > 0) throw new Error(`${target} already holds state; replay into an empty directory`)
  if (config.log === 'embedded' && join(config.dataDir, 'state') === target) throw new Error('--out must differ from the data directory whose log is replayed')
  await initHash()
  const logs = await openLog(config, { self: `replay-${process.pid}` })
  const store = await StateStore.open(target)
  try {
    const catalog = new Catalog(logs.config)
    await catalog.load()
    const bar = o.bar ? new cliProgress.SingleBar({ format: 'replay |{bar}| {percentage}% {value}/{total} records {rate} rec/s eta {eta}s' }, cliProgress.Presets.shades_classic) : undefined
    const started = Date.now()
    let lastTenth = -1
    bar?.start(1, 0, { rate: 0 })
    const result = await rebuild({
      log: logs.log, topic: logs.events, catalog, store,
      exactThreshold: config.exactThreshold, retentionDays: config.retentionDays,
      since: o.since?.getTime(),
      onProgress: (read, total) => {
        const rate = Math.round(read / Math.max(0.001, (Date.now() - started) / 1000))
        if (bar) {
          bar.setTotal(Math.max(1, total))
          bar.update(read, { rate })
        } else if (total > 0 && Math.floor((read / total) * 10) > lastTenth) {
          lastTenth = Math.floor((read / total) * 10)
          o.print(`replay: ${read}/${total} records (${lastTenth * 10} %), ${rate} records/s`)
        }
      },
    })
    bar?.stop()
    const perSecond = Math.round(result.records / Math.max(0.001, result.ms / 1000))
    o.print(`replayed ${result.records} records (${result.folded} folded) of ${result.partitions} partitions in ${(result.ms / 1000).toFixed(2)} s: ${perSecond} events/s`)
    return result
  } finally {
    await store.close()
    await logs.close()
  }
}
