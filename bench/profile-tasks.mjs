#!/usr/bin/env node
/**
 * The longest tasks of a V8 .cpuprofile (from `node --cpu-prof`, e.g. `bench/run.mjs ingest
 * --profile`): what held the event loop when the bench's loop delay went up. A task here is a run
 * of consecutive samples under the same frame below the root (a request, a fold, a snapshot
 * slice resumed from an immediate, ...); a garbage collection counts towards the task it
 * interrupted. Sampling is sparse under load (a sample every few ms), so two short tasks of the
 * same kind with nothing sampled between them read as one: treat a long "task" made of many
 * slices of an encoding that yields as an upper bound.
 *
 *   node bench/profile-tasks.mjs <file.cpuprofile> [min ms=40] [tasks=12]
 */
import { readFileSync } from 'node:fs'

const [file, minMsArg = '40', countArg = '12'] = process.argv.slice(2)
if (!file) {
  process.stderr.write('usage: node bench/profile-tasks.mjs <file.cpuprofile> [min ms=40] [tasks=12]\n')
  process.exit(2)
}
const minMs = Number(minMsArg)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parentOf = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id)
const nameOf = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`
const stacks = new Map()
/** the frames from the sample's own up to the root's child (the task) */
function stackOf(id) {
  let s = stacks.get(id)
  if (!s) {
    s = []
    for (let cur = id; parentOf.has(cur); cur = parentOf.get(cur)) s.push(nameOf(nodes.get(cur)))
    stacks.set(id, s)
  }
  return s
}
const IDLE = new Set(['(idle)', '(program)'])

const tasks = []
let task
let t = profile.startTime
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]
  const id = profile.samples[i]
  const fn = nodes.get(id).callFrame.functionName
  const root = fn === '(garbage collector)' ? task?.root : stackOf(id).at(-1)
  if (task && (IDLE.has(fn) || root !== task.root)) {
    const ms = (t - task.start) / 1000
    if (ms >= minMs) tasks.push({ ...task, ms })
    task = undefined
  }
  if (!IDLE.has(fn)) {
    task ??= { root, start: t, samples: [] }
    task.samples.push(id)
  }
}

console.log(`${file}: ${tasks.length} tasks of ${minMs} ms or more`)
for (const k of tasks.sort((a, b) => b.ms - a.ms).slice(0, Number(countArg))) {
  const on = new Map()
  const self = new Map()
  for (const id of k.samples) {
    for (const f of new Set(stackOf(id))) on.set(f, (on.get(f) ?? 0) + 1)
    const f = nameOf(nodes.get(id))
    self.set(f, (self.get(f) ?? 0) + 1)
  }
  const share = (c) => `${Math.round((100 * c) / k.samples.length)} %`.padStart(5)
  console.log(`\n${k.ms.toFixed(1)} ms at ${((k.start - profile.startTime) / 1e6).toFixed(1)} s (${k.samples.length} samples)`)
  for (const [f, c] of [...on].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${share(c)}  ${f}`)
  console.log(`  self: ${[...self].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([f, c]) => `${f} (${c})`).join(', ')}`)
}
