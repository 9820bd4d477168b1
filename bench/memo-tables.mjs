#!/usr/bin/env node
/**
 * The per-event memo tables (bot answers, parsed user agents, origins) against a plain Map, on
 * the hit path that a repeating session takes on nearly every event:
 *
 *   node bench/memo-tables.mjs
 *
 * Prints nanoseconds per lookup for `lru-cache` and for `Map`, three rounds each, alternating.
 */
import { LRUCache } from 'lru-cache'

const N = 5_000_000
const agents = Array.from({ length: 300 }, (_, i) =>
  `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + i}.0 Safari/537.36`)
const lru = new LRUCache({ max: 512 })
const map = new Map()
for (const a of agents) {
  lru.set(a, true)
  map.set(a, true)
}

function perLookup(get) {
  let hits = 0
  const started = process.hrtime.bigint()
  for (let i = 0; i < N; i++) if (get(agents[(i * 7) % agents.length])) hits++
  if (hits !== N) throw new Error('a lookup missed')
  return Number(process.hrtime.bigint() - started) / N
}

for (let round = 1; round <= 3; round++) {
  const a = perLookup((k) => lru.get(k))
  const b = perLookup((k) => map.get(k))
  console.log(`round ${round}: lru-cache ${a.toFixed(1)} ns, Map ${b.toFixed(1)} ns, difference ${(a - b).toFixed(1)} ns per lookup`)
}
