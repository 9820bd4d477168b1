import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { logContract, type LogUnderTest } from '../contract.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { writeBatch } from './storage.js'

logContract(t, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  let failing = false
  const open = async (): Promise<{ log: EmbeddedLog; config: EmbeddedConfigLog }> => {
    const log = await EmbeddedLog.open({
      dir,
      writer: (db, ops, sync) => (failing ? Promise.reject(Object.assign(new Error('injected write failure'), { code: 'EIO' })) : writeBatch(db, ops, sync)),
    })
    return { log, config: new EmbeddedConfigLog(log) }
  }
  let current = await open()
  const close = async (): Promise<void> => {
    await current.config.close()
    await current.log.close()
  }
  const under: LogUnderTest = {
    ...current,
    async cleanup() {
      await close()
      await rm(dir, { recursive: true, force: true })
    },
    async reopen() {
      await close()
      current = await open()
      Object.assign(under, current)
    },
    failWrites(fail) {
      failing = fail
    },
    enforceRetention: (now) => current.log.enforceRetention(now),
  }
  return under
})
