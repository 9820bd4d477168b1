/**
 * What the log keeps in LevelDB about a sealed data file (keys.ts), version 1, so that opening
 * the log reads a few bytes per file instead of every file:
 *
 *   ranges  version:u8 = 1 | n:u32 | n × ( partition:u32 | first:u64 | end:u64 )
 *   index    version:u8 = 1 | n:u32 | n × ( partition:u32 | segments:u32
 *                                         | segments × ( first:u64 | count:u32 | pos:u32 | len:u32 ) )
 *
 * The offset ranges (the offsets each partition has in the file) are read for every file when the log
 * opens; the index (where each segment lies) only when a read reaches the file. Both are written
 * when a file is sealed, and rebuilt from the file itself when missing.
 */
import { readU64, writeU64 } from './keys.js'
import { SegmentIndex } from './segment-index.js'

const VERSION = 1

export interface OffsetRange {
  first: number
  end: number
}

function checkVersion(buf: Buffer, what: string): void {
  if (buf[0] !== VERSION) throw new Error(`unknown data file ${what} version ${buf[0]}`)
}

export function rangesOf(index: ReadonlyMap<number, SegmentIndex>): Map<number, OffsetRange> {
  const ranges = new Map<number, OffsetRange>()
  for (const [partition, segments] of index) {
    if (segments.size > 0) ranges.set(partition, { first: segments.first, end: segments.end })
  }
  return ranges
}

export function encodeRangesV1(ranges: ReadonlyMap<number, OffsetRange>): Buffer {
  const buf = Buffer.allocUnsafe(5 + ranges.size * 20)
  buf[0] = VERSION
  buf.writeUInt32BE(ranges.size, 1)
  let at = 5
  for (const [partition, { first, end }] of ranges) {
    buf.writeUInt32BE(partition, at)
    writeU64(buf, first, at + 4)
    writeU64(buf, end, at + 12)
    at += 20
  }
  return buf
}

export function decodeRangesV1(buf: Buffer): Map<number, OffsetRange> {
  checkVersion(buf, 'offset ranges')
  const ranges = new Map<number, OffsetRange>()
  const n = buf.readUInt32BE(1)
  for (let i = 0, at = 5; i < n; i++, at += 20) {
    ranges.set(buf.readUInt32BE(at), { first: readU64(buf, at + 4), end: readU64(buf, at + 12) })
  }
  return ranges
}

export function encodeIndexV1(index: ReadonlyMap<number, SegmentIndex>): Buffer {
  let bytes = 5
  for (const segments of index.values()) bytes += 8 + segments.size * 20
  const buf = Buffer.allocUnsafe(bytes)
  buf[0] = VERSION
  buf.writeUInt32BE(index.size, 1)
  let at = 5
  for (const [partition, segments] of index) {
    buf.writeUInt32BE(partition, at)
    buf.writeUInt32BE(segments.size, at + 4)
    at += 8
    for (let i = 0; i < segments.size; i++, at += 20) {
      writeU64(buf, segments.firsts[i], at)
      buf.writeUInt32BE(segments.counts[i], at + 8)
      buf.writeUInt32BE(segments.positions[i], at + 12)
      buf.writeUInt32BE(segments.lengths[i], at + 16)
    }
  }
  return buf
}

export function decodeIndexV1(buf: Buffer): Map<number, SegmentIndex> {
  checkVersion(buf, 'index')
  const index = new Map<number, SegmentIndex>()
  const n = buf.readUInt32BE(1)
  let at = 5
  for (let p = 0; p < n; p++) {
    const segments = new SegmentIndex()
    index.set(buf.readUInt32BE(at), segments)
    const size = buf.readUInt32BE(at + 4)
    at += 8
    for (let i = 0; i < size; i++, at += 20) {
      segments.add({ first: readU64(buf, at), count: buf.readUInt32BE(at + 8), pos: buf.readUInt32BE(at + 12), len: buf.readUInt32BE(at + 16) })
    }
  }
  return index
}
