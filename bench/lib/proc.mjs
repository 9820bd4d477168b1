/**
 * Child processes for the benches: started pinned to a core when `taskset` exists (the server on
 * one core, the load generator on the other, so neither steals the other's CPU), stopped by their
 * own pid, and measured by the CPU time the kernel charged them.
 */
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { availableParallelism } from 'node:os'

export const SERVER_CORE = 0
export const LOAD_CORE = 1

let tasksetFound
/** Pinning needs taskset and at least two cores; otherwise everything runs unpinned. */
export function canPin() {
  tasksetFound ??= spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0
  return tasksetFound && availableParallelism() >= 2
}

/** `argv` prefixed with `taskset -c <core>` when pinning is possible. */
export function pinnedArgv(core, argv) {
  return canPin() ? ['taskset', '-c', String(core), ...argv] : argv
}

/** A port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

const live = new Set()
// a bench interrupted half-way must not leave servers behind
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/**
 * Spawns `argv` (pinned to `core` when given). `ipc` adds a Node IPC channel; it survives the
 * taskset exec because the channel is an inherited file descriptor.
 */
export function start(argv, { core, env, ipc = false, cwd } = {}) {
  const full = core === undefined ? argv : pinnedArgv(core, argv)
  const stdio = ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])]
  const child = spawn(full[0], full.slice(1), { cwd, env: { ...process.env, ...env }, stdio })
  child.output = ''
  const keep = (chunk) => {
    if (child.output.length < 1 << 20) child.output += chunk.toString()
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

/** Resolves with the first match of `pattern` in the child's output; rejects on exit or timeout. */
export function waitForOutput(child, pattern, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let settled = false
    const finish = (err, m) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.stdout.off('data', check)
      child.stderr.off('data', check)
      err ? reject(err) : resolve(m)
    }
    function check() {
      const m = pattern.exec(child.output)
      if (m) finish(null, m)
    }
    const timer = setTimeout(() => finish(new Error(`no ${pattern} within ${timeoutMs} ms\n${child.output.slice(-4000)}`)), timeoutMs)
    child.exited.then(({ code, signal }) => finish(new Error(`exited (${code ?? signal}) before printing ${pattern}\n${child.output.slice(-4000)}`)))
    child.stdout.on('data', check)
    child.stderr.on('data', check)
    check()
  })
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. */
export async function stop(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await child.exited
  clearTimeout(timer)
}

/** The next IPC message of `type` from a child (rejects if it exits first). */
export function nextMessage(child, type, timeoutMs = 30 * 60_000) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m?.type === 'error') finish(new Error(`child failed: ${m.error}`))
      else if (m?.type === type) finish(null, m)
    }
    const onExit = (code, signal) => finish(new Error(`child exited (${code ?? signal}) before sending ${type}\n${child.output.slice(-4000)}`))
    const timer = setTimeout(() => finish(new Error(`no ${type} message within ${timeoutMs} ms`)), timeoutMs)
    function finish(err, m) {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
      err ? reject(err) : resolve(m)
    }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

const CLOCK_TICKS = 100
/** User + system CPU seconds the kernel charged a process (all its threads), or NaN. */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name may hold spaces: fields are counted after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return NaN
  }
}

/** Resident memory of a process now and at its peak (VmRSS, VmHWM), in bytes; NaN when gone. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
    return { rss: kb('VmRSS'), peakRss: kb('VmHWM') }
  } catch {
    return { rss: NaN, peakRss: NaN }
  }
}

/** Prints a line every second while `promise` runs: long steps show they are alive. */
export async function withTicker(label, seconds, promise) {
  const started = Date.now()
  const timer = setInterval(() => {
    const s = Math.round((Date.now() - started) / 1000)
    log(`  ${label}: ${s}${seconds ? `/${seconds}` : ''} s`)
  }, 1000)
  try {
    return await promise
  } finally {
    clearInterval(timer)
  }
}

export function log(line) {
  process.stdout.write(line + '\n')
}
