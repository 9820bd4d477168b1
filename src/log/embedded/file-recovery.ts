/**
 * What opening a topic's data directory finds: every data file in the order of its number, each
 * with the offset ranges LevelDB keeps of it; a file without them (sealed while they were being
 * written, or retention's deletion cut short) is scanned, and so is the last one, which frames
 * go to next. Files a crash left half-written (`.tmp`) are deleted: they never took a frame.
 */
import { mkdir, readdir, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { BatchOp } from './commit-queue.js'
import { DataFile, parseDataFileName, syncDir } from './data-file.js'
import { decodeRangesV1, encodeIndexV1, encodeRangesV1, type OffsetRange } from './file-index-v1.js'
import type { HealingDb } from './healing-db.js'
import { dataFileKey, dataFileRange, fileIndexKey, fileNoOfKey } from './keys.js'

/** A data file as its topic knows it: the offsets it holds, and the file itself while open. */
export interface FileEntry {
  fileNo: number
  ranges: Map<number, OffsetRange>
  /** the open file with its index loaded; null while closed */
  file: Promise<DataFile> | null
  /** reads under way, which its deletion waits for */
  pins: number
  unpinned: (() => void) | null
}

export interface RecoveredFiles {
  entries: FileEntry[]
  /** the last file, open for writing, or null when the topic has none */
  active: DataFile | null
  nextFileNo: number
  /** size of the last file scanned: the next file doubles it */
  lastSize: number
  /** LevelDB writes that bring the offset ranges up to date with the files */
  ops: BatchOp[]
}

export async function recoverFiles(o: { db: HealingDb; dir: string; topic: string }): Promise<RecoveredFiles> {
  if ((await mkdir(o.dir, { recursive: true })) !== undefined) {
    // the new directories must outlive a power cut before any file in them counts
    await syncDir(dirname(o.dir))
    await syncDir(dirname(dirname(o.dir)))
  }
  const names = await readdir(o.dir)
  await Promise.all(names.filter((n) => n.endsWith('.tmp')).map((n) => unlink(join(o.dir, n))))
  const fileNos = names.map(parseDataFileName).filter((n): n is number => n !== null).sort((a, b) => a - b)
  const rangesByFile = new Map<number, Map<number, OffsetRange>>()
  for (const [key, value] of await o.db.read((level) => level.iterator(dataFileRange(o.topic)).all())) {
    rangesByFile.set(fileNoOfKey(key), decodeRangesV1(value))
  }
  const entries: FileEntry[] = []
  const ops: BatchOp[] = []
  let active: DataFile | null = null
  let lastSize = 0
  for (const [i, fileNo] of fileNos.entries()) {
    const entry: FileEntry = { fileNo, ranges: rangesByFile.get(fileNo) ?? new Map<number, OffsetRange>(), file: null, pins: 0, unpinned: null }
    entries.push(entry)
    const isLast = i === fileNos.length - 1
    if (!isLast && rangesByFile.has(fileNo)) continue
    const file = await DataFile.open(o.dir, fileNo, isLast)
    await file.scan()
    entry.ranges = file.ranges
    lastSize = file.size
    if (isLast) {
      active = file
      entry.file = Promise.resolve(file)
    } else {
      ops.push(...sealOps(o.topic, fileNo, file))
      await file.close()
    }
  }
  // offset ranges of files retention deleted while they were being recorded
  for (const fileNo of rangesByFile.keys()) {
    if (!fileNos.includes(fileNo)) ops.push({ type: 'del', key: dataFileKey(o.topic, fileNo) }, { type: 'del', key: fileIndexKey(o.topic, fileNo) })
  }
  return { entries, active, nextFileNo: (fileNos.at(-1) ?? 0) + 1, lastSize, ops }
}

/** What LevelDB keeps of a sealed file. */
export function sealOps(topic: string, fileNo: number, file: DataFile): BatchOp[] {
  return [
    { type: 'put', key: dataFileKey(topic, fileNo), value: encodeRangesV1(file.ranges) },
    { type: 'put', key: fileIndexKey(topic, fileNo), value: encodeIndexV1(file.index!) },
  ]
}
