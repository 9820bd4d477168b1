import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { logContract, type LogUnderTest } from '../contract.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'

logContract(t, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  let failing = false
  const open = async (): Promise<{ log: EmbeddedLog; config: EmbeddedConfigLog }> => {
    const log = await EmbeddedLog.open({
      dir,
      interceptWrite: (ops, write) => (failing ? Promise.reject(new Error('injected write failure')) : write(ops)),
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
    denseOffsets: true,
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
