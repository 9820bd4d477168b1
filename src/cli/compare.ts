import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** the repository root, seen from dist/cli/ */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * The side-by-side ingest bench of bench/ (bare uWS, the durable minimum and the service, pinned
 * to separate cores). It lives in the source tree, not in the package: it needs wrk and taskset.
 */
export async function runCompare(extraArgs: string[]): Promise<number> {
  const runner = join(ROOT, 'bench', 'run.mjs')
  if (!existsSync(runner)) throw new Error(`--compare runs ${runner}, which is only in a source checkout of goalpost`)
  const child = spawn(process.execPath, [runner, 'ingest', ...extraArgs], { cwd: ROOT, stdio: 'inherit' })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}
