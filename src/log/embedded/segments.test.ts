/**
 * Segments and data files on disk: a log stored in LevelDB one value per record (before data
 * files) reads on and grows, a group commit is one frame with a segment per partition, commits
 * past the segment size split, reads start anywhere inside a segment, files roll over and go with
 * retention, and a torn frame is never read.
 */
import { readlinkSync } from 'node:fs'
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { LogRecord } from '../types.js'
import { MAX_SEGMENT_BYTES } from './append-job.js'
import { type FrameWriter, writeFully } from './data-file.js'
import { scanFrame, type StoredPart } from './frame-v1.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { openDb, writeBatch } from './storage.js'

const T0 = 1_767_225_600_000 // 2026-01-01T00:00:00Z, the fixture's clock
const DAY = 86_400_000
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function freshDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-segments-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function readAll(log: EmbeddedLog, topic: string, partition: number): Promise<LogRecord[]> {
  return log.read(topic, partition, 0, await log.endOffset(topic, partition))
}

const fixture = (p: number, i: number, timestamp: number) => ({ key: `sës:${p}:${i}`, value: JSON.stringify({ p, i }), timestamp })
const plain = (r: LogRecord) => ({ key: r.key, value: r.value.toString(), timestamp: r.timestamp })

/**
 * fixtures/log-v1.json holds every LevelDB key and value (hex) of a log written by the embedded
 * log as it was before segments, one record-v1 value per record: topic `events` (3 partitions,
 * retention 1 day) with partition 0 holding 50 records a minute apart from T0 (appends of 1, 2,
 * 7 and 40), partition 1 30 records of which retention removed the first 10, partition 2 5
 * records all removed; topic `changelog` with 3 binary values; and config puts (site a, site b,
 * goal g1, then b deleted).
 */
t.test('a log stored one value per record opens, reads, tails, trims and grows on', async (t) => {
  const dir = await freshDir(t)
  const entries = JSON.parse(await readFile(new URL('./fixtures/log-v1.json', import.meta.url), 'utf8')) as Array<[string, string]>
  const db = await openDb(dir)
  await writeBatch(db, entries.map(([key, value]) => ({ type: 'put', key: Buffer.from(key, 'hex'), value: Buffer.from(value, 'hex') })), true)
  await db.close()

  let log = await EmbeddedLog.open({ dir })
  let config = new EmbeddedConfigLog(log)
  t.teardown(async () => {
    await config.close()
    await log.close()
  })
  t.equal(log.partitionsOf('events'), 3)
  t.same(
    await Promise.all(range(0, 3).map(async (p) => [await log.beginOffset('events', p), await log.endOffset('events', p)])),
    [[0, 50], [10, 30], [5, 5]],
    'begin and end of each partition as stored',
  )
  t.same((await readAll(log, 'events', 0)).map(plain), range(0, 50).map((i) => fixture(0, i, T0 + i * 60_000)), 'partition 0 reads back')
  const p1 = await readAll(log, 'events', 1)
  t.same(p1.map((r) => r.offset), range(10, 30))
  t.same(p1.map(plain), range(10, 30).map((i) => fixture(1, i, T0 + i)), 'partition 1 reads from its log start')
  t.same((await log.read('changelog', 0, 1, 5)).map((r) => [r.offset, r.key, [...r.value]]), [[1, 'state:1', [1, 0, 255]], [2, 'state:2', [2, 0, 255]]])
  t.same(await config.load(), [
    { kind: 'site', id: 'a.example', value: { timezone: 'UTC' } },
    { kind: 'goal', id: 'g1', value: { name: 'signup' } },
  ], 'config as stored')

  const now = Date.now()
  await log.append('events', range(50, 60).map((i) => ({ ...fixture(0, i, now), value: Buffer.from(fixture(0, i, now).value), partition: 0 })))
  await log.append('events', [{ key: 'x', value: Buffer.from('after'), timestamp: now, partition: 2 }])
  t.equal(await log.endOffset('events', 0), 60, 'new records continue the offsets')
  t.same((await log.read('events', 0, 45, 10)).map((r) => r.offset), range(45, 55), 'a read spans old records and a new segment')
  t.same((await log.read('events', 2, 0, 10)).map((r) => [r.offset, r.value.toString()]), [[5, 'after']], 'an emptied partition continues at its log start')

  const tailed: number[] = []
  const sub = log.subscribe('events', 0, 48, (records) => void tailed.push(...records.map((r) => r.offset)))
  const deadline = Date.now() + 5000
  while (tailed.length < 12 && Date.now() < deadline) await sleep(5)
  await sub.close()
  t.same(tailed, range(48, 60), 'a tail from an old record runs into the new ones')

  t.equal(await log.enforceRetention(T0 + DAY + 30 * 60_000), 30 + 20, 'retention removes old records one by one (and all of partition 1)')
  await config.close()
  await log.close()
  log = await EmbeddedLog.open({ dir })
  config = new EmbeddedConfigLog(log)
  t.same([await log.beginOffset('events', 0), await log.endOffset('events', 0)], [30, 60], 'after a restart')
  t.same((await readAll(log, 'events', 0)).map((r) => r.offset), range(30, 60))
  t.same([await log.beginOffset('events', 1), await log.endOffset('events', 1)], [30, 30])
})

/** A frame writer that keeps the parts of every frame it writes (not the zeros or file headers). */
function captureFrames() {
  const frames: StoredPart[][] = []
  const frameWriter: FrameWriter = async (handle, bytes, position) => {
    await writeFully(handle, bytes, position)
    const found = scanFrame(bytes, 0, position, Number.MAX_SAFE_INTEGER)
    if (found.kind === 'frame' && found.next === bytes.length) frames.push(found.parts)
  }
  return { frames, frameWriter }
}

/** The data files of topic `topic` of the log in `dir`, by name. */
async function dataFiles(dir: string, topic: string): Promise<string[]> {
  return (await readdir(join(dir, 'segments', `topic-${topic}`))).filter((name) => name.endsWith('.seg')).sort()
}

t.test('1000 concurrent appends share a handful of frames, one segment per partition each', async (t) => {
  const dir = await freshDir(t)
  const { frames, frameWriter } = captureFrames()
  const log = await EmbeddedLog.open({ dir, frameWriter })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 4 })
  await Promise.all(range(0, 1000).map((i) => log.append('e', [{ key: `k${i}`, value: Buffer.from(`v${i}`), timestamp: Date.now() }])))
  t.ok(frames.length <= 3, `${frames.length} frames for 1000 appends`)
  for (const parts of frames) {
    const partitions = parts.map((p) => p.partition)
    t.same(partitions, [...new Set(partitions)], `one segment per partition in a frame: ${partitions}`)
  }
  t.equal(frames.flat().reduce((n, p) => n + p.count, 0), 1000, 'the segments hold every record')
})

t.test('one commit past the segment size is split, and reads and tails start at any offset', async (t) => {
  const dir = await freshDir(t)
  const { frames, frameWriter } = captureFrames()
  const log = await EmbeddedLog.open({ dir, tail: { chunk: 97, maxBuffered: 10 }, frameWriter })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 1 })
  const value = (i: number) => Buffer.from(`${i}:`.padEnd(300 + (i % 13), 'x'))
  const total = Math.ceil((3.5 * MAX_SEGMENT_BYTES) / 300)
  await log.append('e', range(0, total).map((i) => ({ key: `k${i}`, value: value(i), timestamp: T0 + i })))
  t.equal(frames.length, 1, 'one frame')
  const counts = frames[0].map((p) => p.count)
  t.equal(counts.length, 4, `four segments: ${counts}`)
  t.equal(counts.reduce((a, b) => a + b, 0), total)
  t.ok(frames[0].every((p) => p.len <= MAX_SEGMENT_BYTES), 'none past the segment size')

  const check = async (from: number, max: number) => {
    const got = await log.read('e', 0, from, max)
    const want = range(from, Math.min(total, from + max))
    return got.length === want.length && got.every((r, i) => r.offset === want[i] && r.value.equals(value(want[i])) && r.timestamp === T0 + want[i])
  }
  const bounds = counts.reduce<number[]>((acc, n) => [...acc, (acc.at(-1) ?? 0) + n], [])
  const starts = [0, 1, ...bounds.flatMap((b) => [b - 1, b, b + 1]), total - 1, total]
  const bad: string[] = []
  for (const from of starts) for (const max of [1, 2, 500, 5000]) if (!(await check(from, max))) bad.push(`${from}+${max}`)
  t.same(bad, [], 'every read from a segment edge or inside one returns exactly its range')

  const tailed: LogRecord[] = []
  const sub = log.subscribe('e', 0, bounds[0] - 3, (records) => void tailed.push(...records))
  const deadline = Date.now() + 5000
  while (tailed.length < total - bounds[0] + 3 && Date.now() < deadline) await sleep(5)
  await sub.close()
  t.same(tailed.map((r) => r.offset), range(bounds[0] - 3, total), 'a tail from inside a segment catches up in chunks, in order, once')
})

t.test('retention inside a segment: reading starts past the expired records at once, and survives a restart', async (t) => {
  const dir = await freshDir(t)
  let log = await EmbeddedLog.open({ dir })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 1, retentionMs: DAY })
  const rec = (i: number, timestamp: number) => ({ key: 'k', value: Buffer.from(`v${i}`), timestamp })
  await log.append('e', [rec(0, T0), rec(1, T0), rec(2, T0 + DAY), rec(3, T0)])
  await log.append('e', [rec(4, T0 + 2 * DAY), rec(5, T0 + 2 * DAY)])
  t.equal(await log.enforceRetention(T0 + DAY + 1), 2, 'two records expire inside the first segment')
  t.equal(await log.beginOffset('e', 0), 2)
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.value.toString()), ['v2', 'v3', 'v4', 'v5'])
  await log.close()
  log = await EmbeddedLog.open({ dir })
  t.equal(await log.beginOffset('e', 0), 2, 'the log start inside a segment survives a restart')
  t.same((await log.read('e', 0, 1, 10)).map((r) => r.offset), [2, 3, 4, 5])
  t.equal(await log.enforceRetention(T0 + 2 * DAY + 1), 2, 'the rest of the first segment expires')
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.offset), [4, 5])
})

t.test('data files roll over as they fill, and retention deletes a file once every partition in it expired', async (t) => {
  const dir = await freshDir(t)
  const open = () => EmbeddedLog.open({ dir, maxFileBytes: 1024 * 1024 })
  let log = await open()
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 2, retentionMs: DAY })
  const value = (p: number, i: number) => Buffer.from(`${p}:${i}:`.padEnd(1000, 'x'))
  // partition 1's records are five days younger than partition 0's
  const stamp = (p: number, i: number) => T0 + p * 5 * DAY + i * 1000
  const perPartition = 3000 // ~6 MB: files growing to 1 MiB
  for (let from = 0; from < perPartition; from += 500) {
    await log.append('e', range(from, from + 500).flatMap((i) => [0, 1].map((p) => ({ key: `k${i}`, partition: p, value: value(p, i), timestamp: stamp(p, i) }))))
  }
  const before = await dataFiles(dir, 'e')
  t.ok(before.length >= 6, `${before.length} data files`)
  t.equal(await log.enforceRetention(stamp(0, 2000) + DAY), 2000, 'partition 0 expires up to record 2000')
  const kept = await dataFiles(dir, 'e')
  // (a spare written meanwhile may have joined them)
  t.same(before.filter((name) => !kept.includes(name)), [], 'no file goes while it holds records of partition 1')
  t.same([await log.beginOffset('e', 0), await log.beginOffset('e', 1)], [2000, 0])
  await log.close()
  log = await open()
  t.equal(await log.beginOffset('e', 0), 2000, 'begin survives a restart')
  t.same((await log.read('e', 0, 0, 3)).map((r) => r.offset), [2000, 2001, 2002])
  t.equal(await log.enforceRetention(stamp(1, 2500) + DAY), 1000 + 2500, 'then all of partition 0 and partition 1 up to record 2500')
  const after = await dataFiles(dir, 'e')
  const gone = before.filter((name) => !after.includes(name))
  t.ok(gone.length >= before.length / 2, `${gone.length} of ${before.length} files went`)
  t.same(gone, before.slice(0, gone.length), 'the oldest ones')
  const p1 = await log.read('e', 1, 0, 10_000)
  t.same(p1.map((r) => r.offset), range(2500, perPartition), 'partition 1 reads from its begin on')
  t.ok(p1.every((r) => r.value.equals(value(1, r.offset))), 'with the values it was given')
  await log.close()
  log = await open()
  t.same([await log.beginOffset('e', 0), await log.endOffset('e', 0)], [perPartition, perPartition], 'the emptied partition keeps its end after a restart')
  t.same((await log.read('e', 1, 0, 10_000)).map((r) => r.offset), range(2500, perPartition), 'partition 1 reads the same')
  await log.append('e', [{ key: 'k', partition: 0, value: value(0, perPartition), timestamp: Date.now() }])
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.offset), [perPartition], 'no offset is reused')
})

t.test('a frame torn by a crash is not read, and the next frame takes its place', async (t) => {
  const dir = await freshDir(t)
  let log = await EmbeddedLog.open({ dir })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 1 })
  await log.append('e', range(0, 5).map((i) => ({ key: 'k', value: Buffer.from(`v${i}`), timestamp: T0 })))
  await log.close()
  // what a crash in the middle of a write leaves: a frame header whose payload never fully arrived
  const [name] = await dataFiles(dir, 'e')
  const handle = await open(join(dir, 'segments', 'topic-e', name), 'r+')
  const data = await handle.readFile()
  const end = data.indexOf(Buffer.alloc(64), 16)
  const torn = Buffer.alloc(40, 0xab)
  torn.writeUInt32BE(200, 0)
  await handle.write(torn, 0, torn.length, end)
  await handle.close()
  log = await EmbeddedLog.open({ dir })
  t.equal(await log.endOffset('e', 0), 5, 'the torn frame adds nothing')
  await log.append('e', [{ key: 'k', value: Buffer.from('v5'), timestamp: T0 }])
  await log.close()
  log = await EmbeddedLog.open({ dir })
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.value.toString()), range(0, 6).map((i) => `v${i}`), 'the next frame was written over it')
})

t.test('a batch across two topics is all or nothing: when the second frame fails, the first is taken back', async (t) => {
  const dir = await freshDir(t)
  let failB = false
  // which file a write goes to, by its descriptor (Linux)
  const frameWriter: FrameWriter = async (handle, bytes, position) => {
    if (failB && readlinkSync(`/proc/self/fd/${handle.fd}`).includes('topic-b')) throw Object.assign(new Error('injected'), { code: 'EIO' })
    await writeFully(handle, bytes, position)
  }
  const open = () => EmbeddedLog.open({ dir, frameWriter, probeMs: 20 })
  let log = await open()
  t.teardown(() => log.close())
  await log.createTopic({ name: 'a', partitions: 1 })
  await log.createTopic({ name: 'b', partitions: 1 })
  const rec = (v: string) => ({ key: 'k', value: Buffer.from(v), timestamp: T0 })
  await Promise.all([log.append('a', [rec('a0')]), log.append('b', [rec('b0')])])
  failB = true
  const outcomes = await Promise.allSettled([log.append('a', [rec('a1'), rec('a2')]), log.append('b', [rec('b1')])])
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected'], 'both appends of the batch fail')
  t.same([await log.endOffset('a', 0), await log.endOffset('b', 0)], [1, 1])
  failB = false
  await log.append('a', [rec('a3')])
  t.same((await log.read('a', 0, 0, 10)).map((r) => r.value.toString()), ['a0', 'a3'], 'the next frame of a takes the offsets back')
  await log.close()
  log = await open()
  t.same((await log.read('a', 0, 0, 10)).map((r) => r.value.toString()), ['a0', 'a3'], 'and nothing of the failed batch is back after a restart')
  t.same((await log.read('b', 0, 0, 10)).map((r) => r.value.toString()), ['b0'])
})
