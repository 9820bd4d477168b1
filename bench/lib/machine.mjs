/** What the figures were measured on: results from a shared 2-core machine mean little without it. */
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { canPin } from './proc.mjs'
import { wrkInstalled } from './load.mjs'

export function machine() {
  let cpuModel = cpus()[0]?.model ?? 'unknown'
  try {
    cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel
  } catch {
    // not Linux: os.cpus() is the best there is
  }
  return {
    nproc: availableParallelism(),
    cpuModel,
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverage: loadavg(),
    pinned: canPin(),
    wrk: wrkInstalled(),
  }
}
