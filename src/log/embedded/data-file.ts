/**
 * One data file of a topic (frame-v1.ts). It is written full of zeros and synced before it takes
 * a frame; after that frames are written in place, each with one `write` on a descriptor opened
 * with O_DSYNC. The file's size and blocks never change again, so a write is durable when it
 * returns and needs no journal commit: one thread-pool round trip per group commit, and a full
 * disk can refuse a new file but never tear a frame (bench/log-commit.mjs measures the
 * pre-written file against a plain append + fdatasync).
 */
import { constants } from 'node:fs'
import { type FileHandle, open, rename, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { type OffsetRange, rangesOf } from './file-index-v1.js'
import { checkFileHeader, FILE_HEADER_BYTES, fileHeader, type StoredPart, scanFrame } from './frame-v1.js'
import { SegmentIndex } from './segment-index.js'

/** Writes `bytes` at `position`; tests replace it to inject failures. */
export type FrameWriter = (handle: FileHandle, bytes: Buffer, position: number) => Promise<void>

export const writeFully: FrameWriter = async (handle, bytes, position) => {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done)
    done += bytesWritten
  }
}

const NAME = /^([0-9a-f]{16})\.seg$/
const ZEROS_CHUNK = 1024 * 1024
/** how much of a file one read takes while scanning it for frames */
const SCAN_CHUNK = 4 * 1024 * 1024

export function dataFileName(fileNo: number): string {
  return `${fileNo.toString(16).padStart(16, '0')}.seg`
}

/** The file number a data file's name holds, or null for any other name. */
export function parseDataFileName(name: string): number | null {
  const m = NAME.exec(name)
  return m ? parseInt(m[1], 16) : null
}

/** Makes the new directory entries of `dir` durable. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function readFully(handle: FileHandle, len: number, position: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(len)
  for (let done = 0; done < len;) {
    const { bytesRead } = await handle.read(buf, done, len - done, position + done)
    if (bytesRead === 0) throw new Error(`unexpected end of a log data file at ${position + done}`)
    done += bytesRead
  }
  return buf
}

export class DataFile {
  readonly fileNo: number
  readonly path: string
  readonly size: number
  /** the offsets each partition has here */
  ranges = new Map<number, OffsetRange>()
  /** where each partition's segments lie; null while not loaded (a sealed file not read lately) */
  index: Map<number, SegmentIndex> | null = null
  /** the data ends here: the next frame goes here */
  writeAt = FILE_HEADER_BYTES
  #handle: FileHandle
  #uses = 0
  #unused: (() => void) | null = null

  private constructor(fileNo: number, path: string, size: number, handle: FileHandle) {
    this.fileNo = fileNo
    this.path = path
    this.size = size
    this.#handle = handle
  }

  /** Creates file `fileNo` of `size` bytes in `dir`, written and synced, named only once whole. */
  static async prepare(dir: string, fileNo: number, size: number, write: FrameWriter = writeFully): Promise<void> {
    const path = join(dir, dataFileName(fileNo))
    const tmp = `${path}.tmp`
    try {
      const handle = await open(tmp, 'w')
      try {
        await write(handle, fileHeader(), 0)
        const zeros = Buffer.alloc(Math.min(ZEROS_CHUNK, size))
        for (let at = FILE_HEADER_BYTES; at < size; at += zeros.length) {
          await write(handle, zeros.subarray(0, Math.min(zeros.length, size - at)), at)
        }
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(tmp, path)
      await syncDir(dir)
    } catch (err) {
      await unlink(tmp).catch(() => undefined)
      throw err
    }
  }

  /**
   * Opens file `fileNo` of `dir`: `writable` for the file frames are appended to (O_DSYNC, so
   * every write is durable when it returns), read-only for a sealed one.
   */
  static async open(dir: string, fileNo: number, writable: boolean): Promise<DataFile> {
    const path = join(dir, dataFileName(fileNo))
    const flags = writable ? constants.O_RDWR | constants.O_DSYNC : constants.O_RDONLY
    const handle = await open(path, flags)
    try {
      const { size } = await handle.stat()
      checkFileHeader(await readFully(handle, Math.min(size, FILE_HEADER_BYTES), 0), path)
      return new DataFile(fileNo, path, size, handle)
    } catch (err) {
      await handle.close()
      throw err
    }
  }

  /** Reads the frames from the start: rebuilds `index`, `ranges` and `writeAt`. */
  async scan(): Promise<void> {
    const index = new Map<number, SegmentIndex>()
    let bufPos = FILE_HEADER_BYTES
    let buf = await this.#readChunk(bufPos, SCAN_CHUNK)
    let at = 0
    for (;;) {
      const found = scanFrame(buf, at, bufPos, this.size)
      if (found.kind === 'end') break
      if (found.kind === 'more') {
        bufPos += at
        buf = await this.#readChunk(bufPos, Math.max(SCAN_CHUNK, found.bytes))
        at = 0
        continue
      }
      for (const part of found.parts) indexPart(index, part)
      at = found.next
    }
    this.index = index
    this.ranges = rangesOf(index)
    this.writeAt = bufPos + at
  }

  /** Writes `frame` where the data ends; the caller moves `writeAt` once it counts. */
  write(frame: Buffer, write: FrameWriter): Promise<void> {
    return this.#use(() => write(this.#handle, frame, this.writeAt))
  }

  /** Overwrites `len` bytes at `position` with zeros (undoing a frame, probing the disk). */
  zero(position: number, len: number, write: FrameWriter): Promise<void> {
    return this.#use(() => write(this.#handle, Buffer.alloc(len), position))
  }

  read(pos: number, len: number): Promise<Buffer> {
    return this.#use(() => readFully(this.#handle, len, pos))
  }

  /** Closes the file once the reads and writes under way are done. */
  async close(): Promise<void> {
    if (this.#uses > 0) await new Promise<void>((resolve) => (this.#unused = resolve))
    await this.#handle.close()
  }

  /** Closes and deletes the file. */
  async remove(): Promise<void> {
    await this.close()
    await unlink(this.path)
  }

  #readChunk(pos: number, len: number): Promise<Buffer> {
    return this.read(pos, Math.min(len, this.size - pos))
  }

  async #use<T>(fn: () => Promise<T>): Promise<T> {
    this.#uses++
    try {
      return await fn()
    } finally {
      if (--this.#uses === 0) this.#unused?.()
    }
  }
}

/** Adds a stored segment to a file's index. */
export function indexPart(index: Map<number, SegmentIndex>, part: StoredPart): void {
  let segments = index.get(part.partition)
  if (segments === undefined) {
    segments = new SegmentIndex()
    index.set(part.partition, segments)
  }
  segments.add(part)
}
