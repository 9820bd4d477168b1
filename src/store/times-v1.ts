/**
 * Encoding, version 1, of a goal day's further completion times (goals/completion-times.ts): the
 * sessions that completed the goal more than once that day, with all their times.
 *
 *   record      = version:u8 (=1) kind:u8 (=7) body                     (record-v1.ts)
 *   body        = n:u32 n × (hi:u32 lo:u32 k:u16 k × time:u32)          times ascending, k ≥ 2
 *                 time = ms after the day's time base, as in the goal day (snapshot-v1.ts)
 */
import { CompletionTimes } from '../goals/index.js'
import { KIND_COMPLETION_TIMES, Reader, Writer } from './record-v1.js'

export function encodeCompletionTimes(times: CompletionTimes): Uint8Array {
  let size = 4
  times.forEach((_hi, _lo, list) => (size += 10 + 4 * list.length))
  const w = new Writer(KIND_COMPLETION_TIMES, size)
  w.u32(times.size)
  times.forEach((hi, lo, list) => {
    w.u32(hi)
    w.u32(lo)
    w.u16(list.length)
    for (const t of list) w.u32(t)
  })
  return w.done()
}

export function decodeCompletionTimes(buf: Uint8Array): CompletionTimes {
  const r = new Reader(buf, KIND_COMPLETION_TIMES)
  const out = new CompletionTimes()
  const n = r.u32()
  for (let i = 0; i < n; i++) {
    const hi = r.u32()
    const lo = r.u32()
    const k = r.u16()
    const list: number[] = []
    for (let j = 0; j < k; j++) list.push(r.u32())
    for (let j = 1; j < k; j++) out.add(hi, lo, list[0], list[j])
  }
  r.end()
  return out
}
