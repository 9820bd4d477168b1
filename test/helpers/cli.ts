// Runs the built `goalpost` command line as an operator would.
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const CLI = join(ROOT, 'dist', 'cli', 'main.js')
const RUN_DEADLINE_MS = 120_000

export interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the CLI to its end (killed past the deadline), as an operator would, without tap's loader. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_DEADLINE_MS)
  return new Promise((resolve) => child.once('exit', (code) => {
    clearTimeout(timer)
    resolve({ code, stdout, stderr })
  }))
}

