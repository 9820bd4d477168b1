/**
 * Segments on disk: a log stored one value per record (before segments) reads on and grows,
 * commits past the segment size split, reads start anywhere inside a segment, and retention
 * inside a segment holds across a restart.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { LogRecord } from '../types.js'
import { MAX_SEGMENT_BYTES } from './append-job.js'
import type { BatchOp } from './commit-queue.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { segmentCount } from './segment-v2.js'
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

t.test('one commit past the segment size is split, and reads and tails start at any offset', async (t) => {
  const dir = await freshDir(t)
  const writes: Array<readonly BatchOp[]> = []
  const log = await EmbeddedLog.open({ dir, tail: { chunk: 97, maxBuffered: 10 }, writer: (db, ops, sync) => (writes.push(ops), writeBatch(db, ops, sync)) })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 1 })
  const value = (i: number) => Buffer.from(`${i}:`.padEnd(300 + (i % 13), 'x'))
  const total = Math.ceil((3.5 * MAX_SEGMENT_BYTES) / 300)
  writes.length = 0
  await log.append('e', range(0, total).map((i) => ({ key: `k${i}`, value: value(i), timestamp: T0 + i })))
  const counts = writes.flat().map((op) => (op.type === 'put' ? segmentCount(op.value) : 0))
  t.equal(writes.length, 1, 'one write')
  t.equal(counts.length, 4, `four segments: ${counts}`)
  t.equal(counts.reduce((a, b) => a + b, 0), total)
  t.ok(writes[0].every((op) => op.type === 'put' && op.value.length <= MAX_SEGMENT_BYTES), 'none past the segment size')

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

t.test('retention inside a segment: reading starts past the expired records at once, the segment goes when all of it expired', async (t) => {
  const dir = await freshDir(t)
  const writes: Array<readonly BatchOp[]> = []
  let log = await EmbeddedLog.open({ dir, writer: (db, ops, sync) => (writes.push(ops), writeBatch(db, ops, sync)) })
  t.teardown(() => log.close())
  await log.createTopic({ name: 'e', partitions: 1, retentionMs: DAY })
  const rec = (i: number, timestamp: number) => ({ key: 'k', value: Buffer.from(`v${i}`), timestamp })
  await log.append('e', [rec(0, T0), rec(1, T0), rec(2, T0 + DAY), rec(3, T0)])
  await log.append('e', [rec(4, T0 + 2 * DAY), rec(5, T0 + 2 * DAY)])
  writes.length = 0
  t.equal(await log.enforceRetention(T0 + DAY + 1), 2, 'two records expire inside the first segment')
  t.same(writes.flat().map((op) => op.type), ['put'], 'the segment stays: only the log start is written')
  t.equal(await log.beginOffset('e', 0), 2)
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.value.toString()), ['v2', 'v3', 'v4', 'v5'])
  await log.close()
  log = await EmbeddedLog.open({ dir, writer: (db, ops, sync) => (writes.push(ops), writeBatch(db, ops, sync)) })
  t.equal(await log.beginOffset('e', 0), 2, 'the log start inside a segment survives a restart')
  t.same((await log.read('e', 0, 1, 10)).map((r) => r.offset), [2, 3, 4, 5])
  writes.length = 0
  t.equal(await log.enforceRetention(T0 + 2 * DAY + 1), 2, 'the rest of the first segment expires')
  t.same(writes.flat().map((op) => op.type), ['del', 'put'], 'and it is deleted')
  t.same((await log.read('e', 0, 0, 10)).map((r) => r.offset), [4, 5])
})
