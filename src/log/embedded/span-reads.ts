/**
 * Reading segments of one data file: the ones a read wants lie in offset order but between other
 * partitions' segments, so segments close together are taken in one read (one thread-pool round
 * trip) and cut apart.
 */
import type { DataFile } from './data-file.js'
import type { SegmentIndex } from './segment-index.js'
import type { SegmentBytes } from './segment-scan.js'
import { segmentOverhead } from './segment-v2.js'

/** a gap between two wanted segments up to which one read takes both */
const READ_GAP = 64 * 1024
const MAX_READ = 4 * 1024 * 1024

/**
 * The segments `picked` (indexes into `segments`, ascending) of `file`; with `tableOnly`, only
 * each one's header and table.
 */
export async function readSpans(file: DataFile, segments: SegmentIndex, picked: number[], tableOnly: boolean): Promise<SegmentBytes[]> {
  const found: SegmentBytes[] = []
  for (let k = 0; k < picked.length;) {
    const spanStart = segments.positions[picked[k]]
    let spanEnd = spanStart
    let last = k
    for (; last < picked.length; last++) {
      const i = picked[last]
      const pos = segments.positions[i]
      const end = pos + (tableOnly ? Math.min(segments.lengths[i], segmentOverhead(segments.counts[i])) : segments.lengths[i])
      if (last > k && (pos - spanEnd > READ_GAP || end - spanStart > MAX_READ)) break
      spanEnd = end
    }
    const span = await file.read(spanStart, spanEnd - spanStart)
    for (; k < last; k++) {
      const i = picked[k]
      const pos = segments.positions[i] - spanStart
      const len = tableOnly ? Math.min(segments.lengths[i], segmentOverhead(segments.counts[i])) : segments.lengths[i]
      found.push({ start: segments.firsts[i], value: span.subarray(pos, pos + len) })
    }
  }
  return found
}
