import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { ConfigRecord } from '../types.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'

async function setup(t: Test) {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-config-'))
  const log = await EmbeddedLog.open({ dir })
  t.teardown(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  return { dir, log, config: new EmbeddedConfigLog(log) }
}

t.test('a watcher that throws rejects the put, and the write stands', async (t) => {
  const { config } = await setup(t)
  config.watch(() => {
    throw new Error('watcher bug')
  })
  await t.rejects(config.put({ kind: 'site', id: 'a', value: 1 }), /watcher bug/)
  t.same(await config.load(), [{ kind: 'site', id: 'a', value: 1 }])
})

t.test('bad records are refused before anything is written', async (t) => {
  const { config } = await setup(t)
  await t.rejects(config.put({ kind: '', id: 'a', value: 1 }), { code: 'LOG_BAD_ARGUMENT' })
  await t.rejects(config.put({ kind: 'site', id: '', value: 1 }), { code: 'LOG_BAD_ARGUMENT' })
  await t.rejects(config.put({ kind: 'site', id: 'a', value: undefined }), { code: 'LOG_BAD_ARGUMENT' })
  t.same(await config.load(), [])
})

t.test('concurrent puts share group commits with appends and keep write order across restarts', async (t) => {
  const { dir, log, config } = await setup(t)
  await log.createTopic({ name: 'e', partitions: 1 })
  const seen: ConfigRecord[] = []
  config.watch((record) => seen.push(record))
  const writes = Array.from({ length: 50 }, (_, i) => [
    config.put({ kind: 'goal', id: `g${i % 10}`, value: { i } }),
    log.append('e', [{ key: 'k', value: Buffer.from(`${i}`), timestamp: Date.now() }]),
  ])
  await Promise.all(writes.flat())
  t.same(seen.map((r) => (r.value as { i: number }).i), Array.from({ length: 50 }, (_, i) => i), 'watched in put order')
  const expected = Array.from({ length: 10 }, (_, g) => ({ kind: 'goal', id: `g${g}`, value: { i: 40 + g } }))
  t.same(await config.load(), expected)
  await config.close()
  await t.rejects(config.put({ kind: 'goal', id: 'x', value: 1 }), { code: 'LOG_CLOSED' })
  await log.close()
  const reopened = await EmbeddedLog.open({ dir })
  const again = new EmbeddedConfigLog(reopened)
  await again.put({ kind: 'goal', id: 'g0', value: { i: 99 } })
  t.same((await again.load()).at(-1), { kind: 'goal', id: 'g0', value: { i: 99 } }, 'sequence continues after a restart')
  await reopened.close()
})
