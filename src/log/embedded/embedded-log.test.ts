import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { LogRecord } from '../types.js'
import { EmbeddedLog, type EmbeddedLogOptions } from './index.js'
import { writeBatch } from './storage.js'

const rec = (key: string, value: string, timestamp = Date.now()) => ({ key, value: Buffer.from(value), timestamp })
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function withLog(
  t: Test,
  opts: Omit<EmbeddedLogOptions, 'dir'>,
  fn: (log: EmbeddedLog, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  const log = await EmbeddedLog.open({ dir, ...opts })
  t.teardown(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  await fn(log, dir)
}

t.test('appends are refused with LOG_FULL past maxPending, and accepted again after', async (t) => {
  await withLog(t, { maxPending: 100 }, async (log) => {
    await log.createTopic({ name: 'e', partitions: 1 })
    const first = log.append('e', range(80).map((i) => rec('k', `${i}`)))
    await t.rejects(log.append('e', range(30).map((i) => rec('k', `${i}`))), { code: 'LOG_FULL', canRetry: true })
    await first
    await log.append('e', range(150).map((i) => rec('k', `${i}`)))
    t.equal(await log.endOffset('e', 0), 230, 'one oversized append alone is accepted')
  })
})

t.test('createTopic refuses another partition count and updates retention', async (t) => {
  await withLog(t, {}, async (log, dir) => {
    await log.createTopic({ name: 'e', partitions: 2 })
    await t.rejects(log.createTopic({ name: 'e', partitions: 3 }), { code: 'LOG_TOPIC_CONFLICT' })
    await t.rejects(log.createTopic({ name: 'bad name', partitions: 1 }), { code: 'LOG_BAD_ARGUMENT' })
    await t.rejects(log.createTopic({ name: 'f', partitions: 0 }), { code: 'LOG_BAD_ARGUMENT' })
    await Promise.all([log.createTopic({ name: 'g', partitions: 2 }), log.createTopic({ name: 'g', partitions: 2 })])
    await log.createTopic({ name: 'e', partitions: 2, retentionMs: 1000 })
    await log.append('e', [rec('k', 'old', 0)])
    t.equal(await log.enforceRetention(10_000), 1, 'the new retention applies')
    await log.close()
    const again = await EmbeddedLog.open({ dir })
    t.equal(again.partitionsOf('g'), 2)
    await again.append('e', [rec('k', 'old', 0)])
    t.equal(await again.enforceRetention(10_000), 1, 'the retention was persisted')
    await again.close()
  })
})

t.test('a busy subscriber past its memory bound catches up from LevelDB, in order, once', async (t) => {
  await withLog(t, { tail: { maxBuffered: 10, chunk: 7 } }, async (log) => {
    await log.createTopic({ name: 'e', partitions: 1 })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const calls: LogRecord[][] = []
    const sub = log.subscribe('e', 0, 0, async (records) => {
      calls.push(records)
      if (calls.length === 1) await gate
    })
    await log.append('e', [rec('k', 'v0')])
    while (calls.length === 0) await sleep(1)
    for (let i = 1; i < 100; i++) await log.append('e', [rec('k', `v${i}`)])
    release()
    while (calls.flat().length < 100) await sleep(1)
    await sleep(20)
    await sub.close()
    const all = calls.flat()
    t.same(all.map((r) => r.offset), range(100))
    t.same(all.map((r) => r.value.toString()), range(100).map((i) => `v${i}`))
    t.ok(calls.slice(1).every((c) => c.length <= 10), 'no call exceeds the chunk or the buffer')
  })
})

t.test('a handler that throws stops its subscription, and close() reports why', async (t) => {
  await withLog(t, {}, async (log) => {
    await log.createTopic({ name: 'e', partitions: 1 })
    let calls = 0
    const sub = log.subscribe('e', 0, 0, () => {
      calls++
      throw new Error('handler bug')
    })
    await log.append('e', [rec('k', 'a')])
    while (calls === 0) await sleep(1)
    await log.append('e', [rec('k', 'b')])
    await sleep(20)
    t.equal(calls, 1, 'no delivery after the failure')
    await t.rejects(sub.close(), /handler bug/)
  })
})

t.test('retention runs by itself on a timer', async (t) => {
  await withLog(t, { retentionIntervalMs: 10 }, async (log) => {
    await log.createTopic({ name: 'e', partitions: 2, retentionMs: 1000 })
    await log.append('e', range(10).map((i) => rec(`k${i}`, 'old', Date.now() - 5000)))
    const deadline = Date.now() + 5000
    let left = 10
    while (left > 0 && Date.now() < deadline) {
      await sleep(10)
      left = (await log.endOffset('e', 0)) - (await log.beginOffset('e', 0))
      left += (await log.endOffset('e', 1)) - (await log.beginOffset('e', 1))
    }
    t.equal(left, 0, 'every old record deleted')
  })
})

t.test('after close, calls fail with LOG_CLOSED and healthy() is false', async (t) => {
  await withLog(t, {}, async (log) => {
    await log.createTopic({ name: 'e', partitions: 1 })
    t.equal(log.healthy(), true)
    await log.close()
    t.equal(log.healthy(), false)
    await t.rejects(log.append('e', [rec('k', 'v')]), { code: 'LOG_CLOSED' })
    t.throws(() => log.subscribe('e', 0, 0, () => {}), { code: 'LOG_CLOSED' })
    await log.close() // a second close is harmless
  })
})

t.test('bad arguments are refused with LOG_BAD_ARGUMENT or LOG_UNKNOWN_TOPIC', async (t) => {
  await withLog(t, {}, async (log) => {
    await log.createTopic({ name: 'e', partitions: 2 })
    t.throws(() => log.partitionsOf('nope'), { code: 'LOG_UNKNOWN_TOPIC' })
    await t.rejects(log.read('e', 2, 0, 1), { code: 'LOG_BAD_ARGUMENT' })
    await t.rejects(log.read('e', 0, -1, 1), { code: 'LOG_BAD_ARGUMENT' })
    const badTime = { key: 'k', value: Buffer.from('v'), timestamp: NaN }
    await t.rejects(log.append('e', [badTime]), { code: 'LOG_BAD_ARGUMENT' })
    t.throws(() => log.subscribe('e', 0, 1.5, () => {}), { code: 'LOG_BAD_ARGUMENT' })
    for (const maxFileBytes of [1000, 1.5 * 1024 * 1024 + 0.5, 2 ** 32]) {
      await t.rejects(EmbeddedLog.open({ dir: join(tmpdir(), 'never-opened'), maxFileBytes }), { code: 'LOG_BAD_ARGUMENT', message: /maxFileBytes/ })
    }
  })
})

t.test('timer-driven retention reports its failures instead of swallowing them', async (t) => {
  const errors: string[] = []
  let failRetention = true
  const opts: Omit<EmbeddedLogOptions, 'dir'> = {
    retentionIntervalMs: 20,
    probeMs: 20,
    onError: (err, where) => void errors.push(`${where}: ${(err as Error).message}`),
    // retention's deletes are the only writes without fsync
    writer: async (db, ops, sync) => {
      if (!sync && failRetention) throw Object.assign(new Error('IO error: disk full'), { code: 'LEVEL_IO_ERROR' })
      await writeBatch(db, ops, sync)
    },
  }
  await withLog(t, opts, async (log) => {
    await log.createTopic({ name: 'e', partitions: 1, retentionMs: 1000 })
    await log.append('e', [rec('k', 'expired', 0), rec('k', 'fresh')])
    const deadline = Date.now() + 5000
    while (!errors.some((e) => e.startsWith('retention:')) && Date.now() < deadline) await sleep(10)
    t.match(errors, [/^write: the durable write failed/, /^retention: the durable write failed/], errors.join('; '))
    failRetention = false
    while ((await log.beginOffset('e', 0)) === 0 && Date.now() < deadline) await sleep(10)
    t.equal(await log.beginOffset('e', 0), 1, 'a later run deletes the expired record')
  })
})
