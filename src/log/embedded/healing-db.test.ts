/**
 * Failed writes through injected writers, for the cases a full tmpfs cannot produce: a batch
 * whose fsync failed after its bytes reached the disk — for LevelDB, which leaves it out of the
 * memtable but says it "may or may not show up when the DB is re-opened" (db_impl.cc), simulated
 * by writing it to the database just before the next write, as a replay on open would; for a
 * data file, by writing the frame and then failing — and failures that are bugs rather than
 * passing trouble.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { BatchWriter } from './healing-db.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { type FrameWriter, writeFully } from './data-file.js'
import { writeBatch } from './storage.js'

type Mode = 'ok' | 'reappears' | 'eio' | 'bug'

const rec = (value: string) => ({ key: value, value: Buffer.from(value), timestamp: Date.now() })
const eio = () => Object.assign(new Error('IO error: 000005.log: Input/output error'), { code: 'LEVEL_IO_ERROR' })

async function waitFor(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A log in a fresh directory whose writes do what `mode` says; `reopen` simulates a restart. */
async function faultyLog(t: Test) {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-heal-'))
  const open = async () => {
    const log = await EmbeddedLog.open({ dir, writer, frameWriter, probeMs: 20 })
    return { log, config: new EmbeddedConfigLog(log) }
  }
  const close = async () => {
    await current.config.close()
    await current.log.close()
  }
  const h = {
    mode: 'ok' as Mode,
    writes: 0,
    get log() { return current.log },
    get config() { return current.config },
    async reopen() {
      await close()
      current = await open()
    },
    async values(partition = 0) {
      const end = await current.log.endOffset('e', partition)
      return (await current.log.read('e', partition, 0, end)).map((r) => r.value.toString())
    },
  }
  const reappearing: Parameters<BatchWriter>[1][] = []
  const writer: BatchWriter = async (db, ops, sync) => {
    h.writes++
    for (const batch of reappearing.splice(0)) await writeBatch(db, batch, true)
    if (h.mode === 'bug') throw new TypeError('batch.put is not a function')
    if (h.mode === 'reappears') reappearing.push(ops)
    if (h.mode === 'eio' || h.mode === 'reappears') throw eio()
    await writeBatch(db, ops, sync)
  }
  // data files: a frame that "reappears" reached the disk although its write failed, and the
  // zeros meant to blot it out do not arrive
  const frameWriter: FrameWriter = async (handle, bytes, position) => {
    h.writes++
    if (h.mode === 'bug') throw new TypeError('handle.write is not a function')
    if (h.mode === 'reappears' && bytes.some((b) => b !== 0)) await writeFully(handle, bytes, position)
    if (h.mode === 'eio' || h.mode === 'reappears') throw eio()
    await writeFully(handle, bytes, position)
  }
  let current = await open()
  t.teardown(async () => {
    await close()
    await rm(dir, { recursive: true, force: true })
  })
  return h
}

t.test('a batch whose fsync failed after it reached the disk never becomes readable, even after a restart', async (t) => {
  const h = await faultyLog(t)
  await h.log.createTopic({ name: 'e', partitions: 1 })
  await h.config.put({ kind: 'goal', id: 'g', value: 'v1' })
  await h.log.append('e', [rec('a0'), rec('a1')])
  h.mode = 'reappears'
  await t.rejects(h.log.append('e', ['x0', 'x1', 'x2', 'x3'].map(rec)), { code: 'LOG_WRITE_FAILED', canRetry: true })
  await t.rejects(h.config.put({ kind: 'goal', id: 'g', value: 'refused' }), { code: 'LOG_WRITE_FAILED' })
  await t.rejects(h.config.put({ kind: 'goal', id: 'new', value: 'refused' }), { code: 'LOG_WRITE_FAILED' })
  t.equal(await h.log.endOffset('e', 0), 2, 'the end stays at the last acknowledged offset')
  t.same(await h.values(), ['a0', 'a1'], 'reads stop there')
  h.mode = 'ok'
  await h.log.append('e', [rec('b0')])
  t.same(await h.values(), ['a0', 'a1', 'b0'], 'the next batch takes the refused offsets')
  await h.reopen()
  t.same(await h.values(), ['a0', 'a1', 'b0'], 'after a restart the refused records past it are gone too')
  t.same(await h.config.load(), [{ kind: 'goal', id: 'g', value: 'v1' }], 'and the config is as before the refused puts')
})

t.test('closing while unhealthy puts back what a failed batch touched', async (t) => {
  const h = await faultyLog(t)
  await h.log.createTopic({ name: 'e', partitions: 1 })
  await h.log.append('e', [rec('a0')])
  h.mode = 'reappears'
  await t.rejects(h.log.append('e', [rec('x0'), rec('x1')]))
  h.mode = 'ok'
  await h.reopen()
  t.same(await h.values(), ['a0'])
})

t.test('a probe write heals the log without any append; reads wait out the reopen', async (t) => {
  const h = await faultyLog(t)
  await h.log.createTopic({ name: 'e', partitions: 1 })
  await h.log.append('e', [rec('a0')])
  const delivered: string[] = []
  const sub = h.log.subscribe('e', 0, 0, (records) => void delivered.push(...records.map((r) => r.value.toString())))
  h.mode = 'eio'
  await t.rejects(h.log.append('e', [rec('x0')]), { code: 'LOG_WRITE_FAILED' })
  t.equal(h.log.healthy(), false)
  const failedWrites = h.writes
  await waitFor('probe writes', () => h.writes >= failedWrites + 3)
  t.equal(h.log.healthy(), false, 'still unhealthy while the probes fail')
  h.mode = 'ok'
  await waitFor('the probe to succeed', () => h.log.healthy())
  await h.log.append('e', [rec('a1')])
  await waitFor('delivery', () => delivered.length >= 2)
  await sub.close()
  t.same(delivered, ['a0', 'a1'], 'the subscription went on through the reopen and never saw x0')
})

t.test('a failure retrying cannot fix is not retryable', async (t) => {
  const h = await faultyLog(t)
  await h.log.createTopic({ name: 'e', partitions: 1 })
  h.mode = 'bug'
  await t.rejects(h.log.append('e', [rec('x0')]), { code: 'LOG_STORAGE_FAILED', canRetry: false })
  h.mode = 'ok'
  await h.log.append('e', [rec('a0')])
  t.equal(h.log.healthy(), true)
  t.same(await h.values(), ['a0'])
})
