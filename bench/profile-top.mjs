#!/usr/bin/env node
/**
 * The hottest functions of a V8 .cpuprofile (from `node --cpu-prof`), by self time and by total
 * time, with file and line — enough to see where a bench's CPU went without opening DevTools.
 *
 *   node bench/profile-top.mjs <file.cpuprofile> [rows=25]
 */
import { readFileSync } from 'node:fs'
import { table } from './lib/table.mjs'

const [file, rowsArg] = process.argv.slice(2)
if (!file) {
  process.stderr.write('usage: node bench/profile-top.mjs <file.cpuprofile> [rows]\n')
  process.exit(2)
}
const rows = Number(rowsArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))

// samples → self hits per node; time per sample from the deltas
const hits = new Map()
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1)
const total = profile.samples.length
const msPerSample = (profile.endTime - profile.startTime) / 1000 / total

const label = (n) => {
  const f = n.callFrame
  const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(dist|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}` : ''
  return `${f.functionName || '(anonymous)'} ${where}`.trim()
}

const self = new Map()
for (const [id, n] of hits) {
  const key = label(byId.get(id))
  self.set(key, (self.get(key) ?? 0) + n)
}

// inclusive: each sample counts once for every distinct function on its stack
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const inclusive = new Map()
for (const [id, n] of hits) {
  const seen = new Set()
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const key = label(byId.get(cur))
    if (seen.has(key)) continue
    seen.add(key)
    inclusive.set(key, (inclusive.get(key) ?? 0) + n)
  }
}

const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, rows)
const pct = (n) => `${((100 * n) / total).toFixed(1)} %`
console.log(`${file}: ${total} samples, ${(total * msPerSample / 1000).toFixed(1)} s\n`)
console.log(table([['self time', 'share', 'ms'], ...top(self).map(([k, n]) => [k, pct(n), Math.round(n * msPerSample)])]))
console.log('')
console.log(table([['total time (incl. callees)', 'share', 'ms'], ...top(inclusive).map(([k, n]) => [k, pct(n), Math.round(n * msPerSample)])]))
