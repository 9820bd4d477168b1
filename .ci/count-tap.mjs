// Counts leaf test points of a nested TAP 14 stream and prints "N passed, N failed".
import { readFileSync } from 'node:fs'

const lines = readFileSync(process.argv[2], 'utf8').split('\n')
const open = [] // indentation of each "# Subtest:" still waiting for its result line
let passed = 0
let failed = 0
let failedGroups = 0
for (const line of lines) {
  const indent = line.length - line.trimStart().length
  const text = line.trim()
  if (text.startsWith('# Subtest')) {
    open.push(indent)
    continue
  }
  const m = /^(not ok|ok)\b/.exec(text)
  if (!m) continue
  if (open.length && open[open.length - 1] === indent) {
    open.pop()
    // a group with no leaves of its own still counts when it failed (e.g. a file that crashed)
    if (m[1] === 'not ok' && !/# (SKIP|TODO)/i.test(text)) failedGroups++
    continue
  }
  if (/# SKIP/i.test(text)) continue
  // a TODO is a known failure, reported but not counted against the run (TAP's own meaning)
  if (/# TODO/i.test(text)) {
    if (m[1] === 'ok') passed++
    continue
  }
  if (m[1] === 'ok') passed++
  else failed++
}
if (failed === 0 && failedGroups > 0) failed = failedGroups
console.log(`${passed} passed, ${failed} failed`)
