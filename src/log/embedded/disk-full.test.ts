/**
 * The embedded log on a real full disk: a tmpfs mounted with a size limit, filled by a file.
 * First what LevelDB itself does after a failed write (why healing-db.ts reopens the database),
 * then the log: refused appends, healing by itself once there is room, nothing refused readable.
 */
import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { fillDisk, mountTmpfs, whereTmpfsMounts } from '../../../test/helpers/tmpfs.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { openDb, writeBatch } from './storage.js'

const b = (s: string) => Buffer.from(s)
const put = (key: string, value: string) => ({ type: 'put' as const, key: b(key), value: b(value) })
const text = (v: Buffer | undefined) => v?.toString()

async function waitFor(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

if (whereTmpfsMounts(t, import.meta.url)) {
  t.test('LevelDB after a failed write: the batch is not in the memtable, but the handle loses its next write', async (t) => {
    const dir = await mountTmpfs(t, 8)
    const db = await openDb(join(dir, 'db'))
    t.teardown(() => db.close())
    await writeBatch(db, [put('kept', 'before')], true)
    const filler = await fillDisk(dir)
    let refused: unknown
    let n = 0
    // the log file's last page may take a few more records before the disk refuses one
    for (; n < 100_000 && refused === undefined; n++) {
      await writeBatch(db, [put(`r${n}`, 'x'.repeat(100)), put('kept', `v${n}`)], true).catch((err) => (refused = err))
    }
    const failed = `r${n - 1}`
    t.match(refused, { code: 'LEVEL_IO_ERROR', message: /No space left on device/ }, `write ${n} was refused`)
    t.equal(await db.get(b(failed)), undefined, 'the refused batch is not readable on the same handle')
    t.equal(text(await db.get(b('kept'))), n > 1 ? `v${n - 2}` : 'before', 'the key it would have changed holds the last acknowledged value')

    await unlink(filler)
    await writeBatch(db, [put('after', 'acknowledged')], true)
    t.equal(text(await db.get(b('after'))), 'acknowledged', 'with room again, the same handle acknowledges a write and reads it')
    await db.close()
    const reopened = await openDb(join(dir, 'db'))
    t.teardown(() => reopened.close())
    t.equal(await reopened.get(b('after')), undefined,
      'that acknowledged write is gone once the database opens again: after a failed write the handle must be replaced')
    t.equal(await reopened.get(b(failed)), undefined, 'the refused batch did not come back here')
  })

  t.test('the embedded log on a full disk refuses appends retryably, heals by itself and never shows a refused record', async (t) => {
    const dir = await mountTmpfs(t, 16)
    const failures: unknown[] = []
    const open = async () => {
      const log = await EmbeddedLog.open({ dir: join(dir, 'log'), probeMs: 50, onError: (err) => void failures.push(err) })
      return { log, config: new EmbeddedConfigLog(log) }
    }
    let { log, config } = await open()
    t.teardown(async () => {
      await config.close()
      await log.close()
    })
    await log.createTopic({ name: 'e', partitions: 2 })
    await config.put({ kind: 'site', id: 's', value: 'before' })
    const acked: string[] = []
    const append = async (value: string) => {
      await log.append('e', [{ key: value, value: b(value), timestamp: Date.now() }])
      acked.push(value)
    }
    for (let i = 0; i < 20; i++) await append(`early-${i}`)

    const filler = await fillDisk(dir)
    let refused: unknown
    // data files are written ahead: appends go on until the room they had before the disk filled is used up
    for (let i = 0; i < 100_000 && refused === undefined; i++) await append(`full-${i}`).catch((err) => (refused = err))
    t.match(refused, { code: 'LOG_WRITE_FAILED', canRetry: true }, 'an append is refused as retryable')
    t.equal(log.healthy(), false, 'unhealthy after the refusal')
    // config goes to LevelDB, whose log file's last page may take a few more records
    let configRefused: unknown
    let configValue = 'before'
    for (let i = 0; i < 1000 && configRefused === undefined; i++) {
      await config.put({ kind: 'site', id: 's', value: `full-${i}` }).then(() => (configValue = `full-${i}`), (err) => (configRefused = err))
    }
    t.match(configRefused, { code: 'LOG_WRITE_FAILED' }, 'config writes are refused too')
    await t.rejects(append('while-full'), { code: 'LOG_WRITE_FAILED' }, 'the next append tries again and is refused again')
    const seen = failures.length
    await waitFor('two probe writes to fail', () => failures.length >= seen + 2)
    t.equal(log.healthy(), false, 'still unhealthy while the probes fail')

    await unlink(filler)
    await waitFor('the probe write to heal the log', () => log.healthy(), 5000)
    t.pass('healthy again without any append')
    for (let i = 0; i < 5; i++) await append(`late-${i}`)

    const readAll = async () => {
      const values: string[] = []
      for (let p = 0; p < 2; p++) {
        const end = await log.endOffset('e', p)
        const records = await log.read('e', p, 0, end)
        t.same(records.map((r) => r.offset), Array.from({ length: end }, (_, i) => i), `partition ${p} is dense`)
        values.push(...records.map((r) => r.value.toString()))
      }
      return values.sort()
    }
    t.same(await readAll(), [...acked].sort(), 'exactly the acknowledged records are readable')
    await config.close()
    await log.close()
    ;({ log, config } = await open())
    t.same(await readAll(), [...acked].sort(), 'and exactly those after a restart')
    t.same(await config.load(), [{ kind: 'site', id: 's', value: configValue }], 'the refused config write is not there')
  })
}
