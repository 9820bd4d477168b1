import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DataFile, dataFileName, parseDataFileName, writeFully } from './data-file.js'
import { encodeFrame, FILE_HEADER_BYTES, fileHeader } from './frame-v1.js'
import { EmbeddedLog } from './index.js'
import { planSegmentV2 } from './segment-v2.js'

async function freshDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-data-file-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('file names hold the file number, in an order that sorts as numbers do', async (t) => {
  t.equal(parseDataFileName(dataFileName(0x1234_5678_9a)), 0x1234_5678_9a)
  t.equal(parseDataFileName('0000000000000001.seg.tmp'), null)
  t.equal(parseDataFileName('LOG'), null)
  t.ok(dataFileName(9) < dataFileName(10) && dataFileName(255) < dataFileName(256))
})

t.test('a prepared file is whole before it has its name: header, then zeros to its size', async (t) => {
  const dir = await freshDir(t)
  await DataFile.prepare(dir, 7, 3 * 1024 * 1024 + 4096)
  t.same(await readdir(dir), [dataFileName(7)], 'no scratch file left')
  const bytes = await readFile(join(dir, dataFileName(7)))
  t.equal(bytes.length, 3 * 1024 * 1024 + 4096)
  t.same(bytes.subarray(0, FILE_HEADER_BYTES), fileHeader())
  t.ok(bytes.subarray(FILE_HEADER_BYTES).every((b) => b === 0), 'zeros after the header')
  const file = await DataFile.open(dir, 7, true)
  t.teardown(() => file.close())
  await file.scan()
  t.same([file.writeAt, file.ranges.size], [FILE_HEADER_BYTES, 0], 'no frame yet')

  const parts = [{ partition: 1, first: 0, segment: planSegmentV2([{ key: 'k', value: Buffer.from('v'), timestamp: 1 }]) }]
  const { frame } = encodeFrame(parts, file.writeAt)
  await file.write(frame, writeFully)
  await file.scan()
  t.same([file.writeAt, [...file.ranges]], [FILE_HEADER_BYTES + frame.length, [[1, { first: 0, end: 1 }]]], 'a written frame is found again')
})

t.test('a failed preparation leaves no file behind', async (t) => {
  const dir = await freshDir(t)
  let writes = 0
  const failing = async () => {
    if (++writes === 2) throw Object.assign(new Error('No space left on device'), { code: 'ENOSPC' })
  }
  await t.rejects(DataFile.prepare(dir, 1, 2 * 1024 * 1024, failing), { code: 'ENOSPC' })
  t.same(await readdir(dir), [])
})

t.test('frames that straddle the reads of a scan are found whole after a restart', async (t) => {
  const dir = await freshDir(t)
  const open = () => EmbeddedLog.open({ dir, maxFileBytes: 32 * 1024 * 1024 })
  let log = await open()
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 3 })
  // ~26 MB: files of 64 KiB, 128 KiB ... 8 MiB, then the active one of 16 MiB with ~10 MB, more
  // than a scan reads at once (the sealed ones are read through their index, the active one is scanned)
  const value = (i: number) => Buffer.from(`${i}:`.padEnd(200 + ((i * 7919) % 1800), 'y'))
  let n = 0
  while (n < 24_000) {
    const size = 1 + ((n * 31) % 700)
    await log.append('e', Array.from({ length: size }, (_, j) => ({ key: `k${n + j}`, value: value(n + j), timestamp: n + j })))
    n += size
  }
  const ends = await Promise.all([0, 1, 2].map((p) => log.endOffset('e', p)))
  await log.close()
  log = await open()
  t.same(await Promise.all([0, 1, 2].map((p) => log.endOffset('e', p))), ends, 'every partition ends where it did')
  const seen: number[] = []
  let bad = 0
  for (let p = 0; p < 3; p++) {
    for (const r of await log.read('e', p, 0, ends[p])) {
      const i = Number(r.key.slice(1))
      seen.push(i)
      if (!r.value.equals(value(i)) || r.timestamp !== i) bad++
    }
  }
  t.equal(bad, 0, 'every value as written')
  t.same(seen.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i), 'every record once')
})
