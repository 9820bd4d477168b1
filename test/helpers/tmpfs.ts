/**
 * A real size-limited filesystem for disk-full tests: a tmpfs with `size=`. Root mounts it
 * directly; anyone else re-runs the test file inside a new user and mount namespace
 * (`unshare -rm`), where it is root of its own mounts and the tmpfs disappears with the process.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

export type TmpfsPlan = { kind: 'mount' } | { kind: 'namespace' } | { kind: 'skip'; reason: string }

const canUnshare = (): boolean => spawnSync('unshare', ['-rm', 'true'], { stdio: 'ignore' }).status === 0

/** How this process gets a tmpfs. GOALPOST_TEST_TMPFS=namespace forces the re-run, to try that path as root. */
export function tmpfsPlan(): TmpfsPlan {
  const forced = process.env.GOALPOST_TEST_TMPFS
  if (process.getuid?.() === 0 && forced !== 'namespace') return { kind: 'mount' }
  if (canUnshare()) return { kind: 'namespace' }
  return { kind: 'skip', reason: 'mounting a tmpfs needs root or unprivileged user namespaces (unshare -rm), and neither is available here' }
}

/**
 * Runs the calling test file where it can mount a tmpfs: returns true when the caller should go
 * on in this process; otherwise the file was re-run inside `unshare -rm` as a subtest, or skipped.
 */
export function whereTmpfsMounts(t: Test, fileUrl: string): boolean {
  const plan = tmpfsPlan()
  if (plan.kind === 'mount') return true
  if (plan.kind === 'skip') {
    t.skip(plan.reason)
    return false
  }
  const loader = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')
  const env = { ...process.env, GOALPOST_TEST_TMPFS: 'mount' }
  t.spawn('unshare', ['-rm', process.execPath, ...loader, fileURLToPath(fileUrl)], { env }, 'inside unshare -rm')
  return false
}

/** Mounts a tmpfs of `sizeMiB` on a fresh directory, unmounted and removed at teardown. */
export async function mountTmpfs(t: Test, sizeMiB: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir])
  const unmount = () => spawnSync('umount', ['-l', dir], { stdio: 'ignore' })
  process.once('exit', unmount)
  t.teardown(async () => {
    unmount()
    process.removeListener('exit', unmount)
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

/** Fills the filesystem of `dir` up to the last byte with one file; returns its path. */
export async function fillDisk(dir: string): Promise<string> {
  const file = join(dir, 'filler')
  const handle = await open(file, 'w')
  try {
    for (const chunk of [1 << 20, 4096, 1]) {
      const bytes = Buffer.alloc(chunk)
      try {
        for (;;) await handle.write(bytes)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
      }
    }
  } finally {
    await handle.close()
  }
  return file
}
