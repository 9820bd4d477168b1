/**
 * Data file, version 1 — where the embedded log keeps its records (data-file.ts). A file holds
 * the frames of one topic; each group commit appends one frame, holding one segment
 * (segment-v2.ts) per partition it touches:
 *
 *   file     magic "GPLOGSEG" | version:u32 = 1 | reserved:u32 | frame* | zeros to the file's end
 *   frame    payloadLen:u32 | crc32(payload):u32 | payload
 *   payload  part+, where part = partition:u32 | firstOffset:u64 | segmentLen:u32 | segment
 *
 * Files are written full of zeros before use, so a frame length of 0 ends the data. A frame
 * whose length overruns the file or whose CRC does not match was torn by a crash in the middle
 * of its write, so it was never acknowledged: it ends the data too.
 */
import { crc32 } from 'node:zlib'
import { readU64, writeU64 } from './keys.js'
import { segmentCount, type SegmentPlan, writeSegmentV2 } from './segment-v2.js'

const MAGIC = Buffer.from('GPLOGSEG', 'latin1')
const VERSION = 1
export const FILE_HEADER_BYTES = 16
export const FRAME_HEADER_BYTES = 8
const PART_HEADER = 4 + 8 + 4

export function fileHeader(): Buffer {
  const buf = Buffer.alloc(FILE_HEADER_BYTES)
  MAGIC.copy(buf, 0)
  buf.writeUInt32BE(VERSION, 8)
  return buf
}

/** Throws unless `buf` opens with the header of a version 1 data file. */
export function checkFileHeader(buf: Buffer, path: string): void {
  if (buf.length < FILE_HEADER_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error(`${path} is not a log data file`)
  }
  const version = buf.readUInt32BE(8)
  if (version !== VERSION) throw new Error(`${path}: unknown log data file version ${version}`)
}

/** One partition's segment in a frame being written. */
export interface FramePart {
  partition: number
  first: number
  segment: SegmentPlan
}

/** One partition's segment as stored: where in the file its bytes lie. */
export interface StoredPart {
  partition: number
  first: number
  count: number
  /** file position of the segment's first byte */
  pos: number
  len: number
}

export function frameBytes(parts: readonly FramePart[]): number {
  let bytes = FRAME_HEADER_BYTES
  for (const part of parts) bytes += PART_HEADER + part.segment.bytes
  return bytes
}

/**
 * Encodes a frame to be written at file position `pos`, into the buffer `alloc` gives for its
 * size; `stored` tells where each segment will lie once it is.
 */
export function encodeFrame(
  parts: readonly FramePart[],
  pos: number,
  alloc: (bytes: number) => Buffer = Buffer.allocUnsafe,
): { frame: Buffer; stored: StoredPart[] } {
  const frame = alloc(frameBytes(parts))
  const stored: StoredPart[] = []
  let at = FRAME_HEADER_BYTES
  for (const { partition, first, segment } of parts) {
    frame.writeUInt32BE(partition, at)
    writeU64(frame, first, at + 4)
    frame.writeUInt32BE(segment.bytes, at + 12)
    at += PART_HEADER
    writeSegmentV2(segment, frame, at)
    stored.push({ partition, first, count: segment.records.length, pos: pos + at, len: segment.bytes })
    at += segment.bytes
  }
  const payload = frame.subarray(FRAME_HEADER_BYTES)
  frame.writeUInt32BE(payload.length, 0)
  frame.writeUInt32BE(crc32(payload), 4)
  return { frame, stored }
}

export type FrameScan =
  /** a whole frame: its parts and the buffer index right after it */
  | { kind: 'frame'; parts: StoredPart[]; next: number }
  /** the frame runs past the buffer: read `bytes` from the frame's start and look again */
  | { kind: 'more'; bytes: number }
  /** no frame starts here: the data ends */
  | { kind: 'end' }

/**
 * Reads the frame starting at `at` in `buf`, which holds the file from position `bufPos` on;
 * `fileSize` bounds a frame's length.
 */
export function scanFrame(buf: Buffer, at: number, bufPos: number, fileSize: number): FrameScan {
  if (at + FRAME_HEADER_BYTES > buf.length) {
    return bufPos + at + FRAME_HEADER_BYTES > fileSize ? { kind: 'end' } : { kind: 'more', bytes: FRAME_HEADER_BYTES }
  }
  const len = buf.readUInt32BE(at)
  const total = FRAME_HEADER_BYTES + len
  if (len === 0 || bufPos + at + total > fileSize) return { kind: 'end' }
  if (at + total > buf.length) return { kind: 'more', bytes: total }
  const payloadAt = at + FRAME_HEADER_BYTES
  if (crc32(buf.subarray(payloadAt, at + total)) !== buf.readUInt32BE(at + 4)) return { kind: 'end' }
  const parts: StoredPart[] = []
  let p = payloadAt
  while (p < at + total) {
    if (p + PART_HEADER > at + total) throw new Error(`frame at ${bufPos + at}: a part overruns the frame`)
    const segLen = buf.readUInt32BE(p + 12)
    const segAt = p + PART_HEADER
    if (segAt + segLen > at + total) throw new Error(`frame at ${bufPos + at}: a segment overruns the frame`)
    parts.push({
      partition: buf.readUInt32BE(p),
      first: readU64(buf, p + 4),
      count: segmentCount(buf.subarray(segAt, segAt + segLen)),
      pos: bufPos + segAt,
      len: segLen,
    })
    p = segAt + segLen
  }
  return { kind: 'frame', parts, next: at + total }
}
