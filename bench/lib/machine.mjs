/** What the figures were measured on: results from a shared 2-core machine mean little without it. */
import { spawnSync } from 'node:child_process'
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

/** The commit measured, and whether src/ differed from it (dist/ is built from the working tree). */
export function revision(cwd) {
  const git = (...args) => spawnSync('git', args, { cwd, encoding: 'utf8' })
  const head = git('rev-parse', '--short', 'HEAD')
  if (head.status !== 0) return { commit: null, srcDirty: null }
  return { commit: head.stdout.trim(), srcDirty: git('status', '--porcelain', '--', 'src').stdout.trim() !== '' }
}
