/**
 * The data files of one topic (data-file.ts): the active file frames go to, a spare written
 * ahead so that rolling over costs no wait, and the sealed files before them, each known by
 * the offset ranges it holds (kept in LevelDB, file-index-v1.ts).
 *
 * Files are used in the order of their numbers, so the highest-numbered file is the active one
 * after a restart and offsets grow from file to file. New files start at 64 KiB and double up to
 * `maxFileBytes`, and never take more than a quarter of the free space: a topic with a few
 * records takes little room, and a nearly full disk gets small files rather than none.
 *
 * Failures: a frame whose write failed may sit on disk in part or whole; its header is zeroed
 * and the next frame is written over it, so it is never read. A disk that is full refuses a new
 * file, never a frame (the files are written ahead), and while writes fail a probe write every
 * `probeMs` finds out when they work again.
 */
import { statfs, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { LogError, storageFailure } from '../errors.js'
import { DataFile, dataFileName, type FrameWriter, indexPart } from './data-file.js'
import { decodeIndexV1, type OffsetRange } from './file-index-v1.js'
import { type FileEntry, recoverFiles, sealOps } from './file-recovery.js'
import { encodeFrame, FILE_HEADER_BYTES, FRAME_HEADER_BYTES, type FramePart, frameBytes, type StoredPart } from './frame-v1.js'
import type { HealingDb } from './healing-db.js'
import { dataFileKey, fileIndexKey } from './keys.js'
import type { SegmentBytes } from './segment-scan.js'
import { readSpans } from './span-reads.js'
import { WriteHealth } from './write-health.js'

const MIN_FILE_BYTES = 64 * 1024
const ALIGN = 4096
/** sealed files kept open, with their index, for reads */
const OPEN_SEALED = 16
const MAX_KEPT_FRAME_BUFFER = 16 * 1024 * 1024

export interface TopicFilesOptions {
  db: HealingDb
  /** the topic's own directory */
  dir: string
  topic: string
  maxFileBytes: number
  probeMs: number
  writer: FrameWriter
  onFailure(err: LogError): void
}

const roundUp = (n: number): number => Math.ceil(n / ALIGN) * ALIGN

export class TopicFiles {
  readonly #o: TopicFilesOptions
  readonly #entries: FileEntry[]
  #active: DataFile | null
  #nextFileNo: number
  #lastSize: number
  #spare: { fileNo: number; size: number; ready: Promise<void> } | null = null
  /** sealed files whose ranges and index are not in LevelDB yet */
  readonly #unsealed = new Map<FileEntry, DataFile>()
  #persisting: Promise<void> | null = null
  readonly #openSealed = new Set<FileEntry>()
  /** the last frame written, until the next one: what `undoLast` takes back */
  #last: { file: DataFile; writeAt: number; sizes: Map<number, number> } | null = null
  readonly #health: WriteHealth
  /** a failed frame may lie where the data ends: zeros must go over its header before a restart */
  #dirty = false
  #writing: Promise<unknown> = Promise.resolve()
  #scratch = Buffer.alloc(0)
  #closed = false

  private constructor(o: TopicFilesOptions, entries: FileEntry[], active: DataFile | null, nextFileNo: number, lastSize: number) {
    this.#o = o
    this.#entries = entries
    this.#active = active
    this.#nextFileNo = nextFileNo
    this.#lastSize = lastSize
    this.#health = new WriteHealth(o.probeMs, o.onFailure, () =>
      this.#exclusive(() => (this.#health.healthy ? Promise.resolve() : this.#probeOnce())).catch((err: unknown) => {
        throw this.#health.failed(storageFailure(err, 'the disk does not take writes yet'))
      }))
  }

  /** Opens the topic's files: offset ranges from LevelDB, frames of the active file (and of any file without them) scanned. */
  static async open(o: TopicFilesOptions): Promise<TopicFiles> {
    const found = await recoverFiles(o)
    const files = new TopicFiles(o, found.entries, found.active, found.nextFileNo, found.lastSize)
    // without them the next open scans those files again: not worth failing the open for
    if (found.ops.length > 0) await o.db.write(found.ops, false).catch((err: unknown) => o.onFailure(storageFailure(err)))
    return files
  }

  /** false from a failed write until a write (a frame or the probe) succeeds */
  get healthy(): boolean {
    return this.#health.healthy
  }

  /** The offsets `partition` has in the files, if any. */
  range(partition: number): OffsetRange | undefined {
    let first: number | undefined
    let end = 0
    for (const entry of this.#entries) {
      const range = entry.ranges.get(partition)
      if (range === undefined) continue
      first ??= range.first
      end = range.end
    }
    return first === undefined ? undefined : { first, end }
  }

  /** Writes one frame holding `parts` durably. Rejects with a LogError, and then nothing of it counts. */
  append(parts: readonly FramePart[]): Promise<void> {
    return this.#exclusive(() => this.#append(parts))
  }

  async #append(parts: readonly FramePart[]): Promise<void> {
    if (this.#closed) throw new LogError('LOG_CLOSED')
    const bytes = frameBytes(parts)
    let file: DataFile | null = null
    try {
      file = await this.#room(bytes)
      const { frame, stored } = encodeFrame(parts, file.writeAt, (n) => this.#frameBuffer(n))
      await file.write(frame, this.#o.writer)
      this.#record(file, stored, frame.length)
    } catch (cause) {
      // the next frame goes to the same place; meanwhile nothing of this one may read as a frame
      if (file !== null) {
        this.#dirty = true
        await this.#blot().catch(() => undefined)
      }
      throw this.#health.failed(storageFailure(cause))
    }
    this.#dirty = false
    this.#health.succeeded()
    // half a file ahead: the spare (twice as big) is ready before it is needed, except for the
    // smallest first files, and the room written ahead stays small while a topic is small
    if (this.#spare === null && file.writeAt > file.size / 2) this.#prepareSpare()
  }

  /** Takes back the last frame `append` wrote (a batch that failed in another topic). */
  undoLast(): Promise<void> {
    return this.#exclusive(() => this.#undoLast())
  }

  async #undoLast(): Promise<void> {
    const last = this.#last
    if (last === null) return
    this.#last = null
    const { file, writeAt, sizes } = last
    for (const [partition, size] of sizes) {
      const segments = file.index!.get(partition)!
      segments.truncate(size)
      if (size === 0) file.ranges.delete(partition)
      else file.ranges.set(partition, { first: segments.first, end: segments.end })
    }
    file.writeAt = writeAt
    await file.zero(writeAt, FRAME_HEADER_BYTES, this.#o.writer).catch(() => undefined)
  }

  /**
   * The stored segments holding the records of `partition` from `from` on, below `until`: as
   * many as hold `max` records from `from` on, or all up to `until`. The first may begin before
   * `from`. With `tableOnly`, each value holds only the segment's header and table (timestamps).
   */
  async segments(partition: number, from: number, until: number, max: number, tableOnly = false): Promise<SegmentBytes[]> {
    const found: SegmentBytes[] = []
    let at = from
    let wanted = max
    for (const entry of this.#entries) {
      if (wanted <= 0 || at >= until) break
      const range = entry.ranges.get(partition)
      if (range === undefined || range.end <= at || range.first >= until) continue
      entry.pins++
      try {
        const file = await this.#opened(entry)
        const segments = file.index!.get(partition)!
        const picked: number[] = []
        for (let i = segments.find(at); i < segments.size && wanted > 0 && segments.firsts[i] < until; i++) {
          picked.push(i)
          const end = Math.min(until, segments.firsts[i] + segments.counts[i])
          wanted -= end - Math.max(at, segments.firsts[i])
          at = end
        }
        found.push(...(await readSpans(file, segments, picked, tableOnly)))
      } finally {
        if (--entry.pins === 0) entry.unpinned?.()
      }
    }
    this.#evict()
    return found
  }

  /**
   * Deletes the sealed files in which every partition's records lie below its `begin`. Makes
   * LevelDB durable first, so that the log starts retention wrote outlive the files.
   */
  async deleteBelow(begin: (partition: number) => number): Promise<number> {
    const active = this.#active?.fileNo
    const doomed = this.#entries.filter((entry) =>
      entry.fileNo !== active && [...entry.ranges].every(([partition, range]) => range.end <= begin(partition)))
    if (doomed.length === 0) return 0
    await this.#o.db.write(doomed.flatMap((e) => [{ type: 'del' as const, key: dataFileKey(this.#o.topic, e.fileNo) }, { type: 'del' as const, key: fileIndexKey(this.#o.topic, e.fileNo) }]), true)
    for (const entry of doomed) {
      this.#entries.splice(this.#entries.indexOf(entry), 1)
      this.#unsealed.delete(entry)
      this.#openSealed.delete(entry)
      if (entry.pins > 0) await new Promise<void>((resolve) => (entry.unpinned = resolve))
      const file = await entry.file?.catch(() => null)
      if (file) await file.close()
      await unlink(join(this.#o.dir, dataFileName(entry.fileNo))).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err
      })
    }
    return doomed.length
  }

  /** Waits for the spare under way, records the sealed files' offset ranges if it can, closes every file. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#health.stop()
    await this.#spare?.ready.catch(() => undefined)
    await this.#exclusive(() => this.#blot()).catch(() => undefined)
    await this.#persistSeals().catch(() => undefined)
    for (const entry of this.#entries) {
      const file = await entry.file?.catch(() => null)
      await file?.close()
      entry.file = null
    }
  }

  /** The active file, rolled over to the next when `bytes` more do not fit. */
  async #room(bytes: number): Promise<DataFile> {
    const active = this.#active
    if (active !== null && active.writeAt + bytes <= active.size) return active
    let spare = this.#spare
    this.#spare = null
    if (spare !== null) {
      const ready = await spare.ready.then(() => true, () => false)
      if (!ready || spare.size < FILE_HEADER_BYTES + bytes) {
        // files are used in the order of their numbers: a spare that cannot take this frame goes
        if (ready) await unlink(join(this.#o.dir, dataFileName(spare.fileNo))).catch(() => undefined)
        spare = null
      }
    }
    if (spare === null) {
      const fileNo = this.#nextFileNo++
      const size = Math.max(await this.#nextSize(), roundUp(FILE_HEADER_BYTES + bytes))
      await DataFile.prepare(this.#o.dir, fileNo, size, this.#o.writer)
      this.#lastSize = size
      spare = { fileNo, size, ready: Promise.resolve() }
    }
    const file = await DataFile.open(this.#o.dir, spare.fileNo, true)
    file.index = new Map()
    if (active !== null) {
      const sealed = this.#entries.at(-1)!
      this.#unsealed.set(sealed, active)
      this.#openSealed.add(sealed)
      void this.#persistSeals().catch(() => undefined)
    }
    this.#entries.push({ fileNo: file.fileNo, ranges: file.ranges, file: Promise.resolve(file), pins: 0, unpinned: null })
    this.#active = file
    this.#last = null
    return file
  }

  /**
   * A buffer for the next frame, reused from frame to frame (one is written at a time): a fresh
   * buffer of a few MiB per commit cost more in page faults than encoding the frame.
   */
  #frameBuffer(bytes: number): Buffer {
    if (bytes > MAX_KEPT_FRAME_BUFFER) return Buffer.allocUnsafe(bytes)
    if (this.#scratch.length < bytes) this.#scratch = Buffer.allocUnsafe(Math.min(MAX_KEPT_FRAME_BUFFER, Math.max(bytes, this.#scratch.length * 2)))
    return this.#scratch.subarray(0, bytes)
  }

  #record(file: DataFile, stored: StoredPart[], bytes: number): void {
    const index = file.index!
    const sizes = new Map<number, number>()
    for (const part of stored) {
      if (!sizes.has(part.partition)) sizes.set(part.partition, index.get(part.partition)?.size ?? 0)
      indexPart(index, part)
      const range = file.ranges.get(part.partition)
      if (range === undefined) file.ranges.set(part.partition, { first: part.first, end: part.first + part.count })
      else range.end = part.first + part.count
    }
    this.#last = { file, writeAt: file.writeAt, sizes }
    file.writeAt += bytes
  }

  async #nextSize(): Promise<number> {
    let size = Math.min(this.#o.maxFileBytes, Math.max(MIN_FILE_BYTES, this.#lastSize * 2))
    const fs = await statfs(this.#o.dir).catch(() => null)
    if (fs !== null) size = Math.min(size, Math.max(MIN_FILE_BYTES, Math.floor((fs.bavail * fs.bsize) / 4)))
    return roundUp(size)
  }

  #prepareSpare(): void {
    if (this.#closed) return
    const fileNo = this.#nextFileNo++
    const spare = {
      fileNo,
      size: 0,
      ready: this.#nextSize().then(async (size) => {
        spare.size = size
        await DataFile.prepare(this.#o.dir, fileNo, size, this.#o.writer)
        this.#lastSize = size
      }),
    }
    // a spare that could not be written is written again when the active file is full (or a probe runs)
    spare.ready.catch(() => {
      if (this.#spare === spare) this.#spare = null
    })
    this.#spare = spare
  }

  async #opened(entry: FileEntry): Promise<DataFile> {
    this.#openSealed.delete(entry)
    if (entry.file === null) {
      entry.file = this.#load(entry.fileNo)
      entry.file.catch(() => (entry.file = null))
    }
    if (this.#active === null || entry.fileNo !== this.#active.fileNo) this.#openSealed.add(entry)
    return entry.file
  }

  async #load(fileNo: number): Promise<DataFile> {
    const file = await DataFile.open(this.#o.dir, fileNo, false)
    const stored = await this.#o.db.read((level) => level.get(fileIndexKey(this.#o.topic, fileNo)))
    if (stored === undefined) await file.scan()
    else file.index = decodeIndexV1(stored)
    return file
  }

  #evict(): void {
    for (const entry of this.#openSealed) {
      if (this.#openSealed.size <= OPEN_SEALED) return
      if (entry.pins > 0 || this.#unsealed.has(entry)) continue
      this.#openSealed.delete(entry)
      const file = entry.file
      entry.file = null
      void file?.then((f) => f.close()).catch(() => undefined)
    }
  }

  /** Records the offset ranges and indexes of sealed files in LevelDB, one run at a time. */
  #persistSeals(): Promise<void> {
    this.#persisting ??= (async () => {
      try {
        const batch = [...this.#unsealed]
        if (batch.length === 0) return
        await this.#o.db.write(batch.flatMap(([entry, file]) => sealOps(this.#o.topic, entry.fileNo, file)), false)
        for (const [entry] of batch) this.#unsealed.delete(entry)
      } finally {
        this.#persisting = null
      }
    })()
    return this.#persisting
  }

  /** Runs `fn` after every write before it: frames, undos and probes all write where the data ends. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#writing.then(fn)
    this.#writing = run.catch(() => undefined)
    return run
  }

  /** Zeros over the header of a frame that failed where the data ends, if one may lie there. */
  async #blot(): Promise<void> {
    const active = this.#active
    if (!this.#dirty || active === null) return
    await active.zero(active.writeAt, Math.min(FRAME_HEADER_BYTES, active.size - active.writeAt), this.#o.writer)
    this.#dirty = false
  }

  /** Zeros where the next frame goes, or writes the next file when the active one is full. */
  async #probeOnce(): Promise<void> {
    const active = this.#active
    const room = active === null ? 0 : active.size - active.writeAt
    if (active !== null && room >= FRAME_HEADER_BYTES) {
      await active.zero(active.writeAt, Math.min(room, ALIGN), this.#o.writer)
      this.#dirty = false
      return
    }
    if (this.#spare === null) this.#prepareSpare()
    await this.#spare?.ready
  }
}
