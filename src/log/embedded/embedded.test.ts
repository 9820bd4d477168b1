import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { logContract, reopenable } from '../contract.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'

logContract(t, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  let failing = false
  const under = await reopenable(async () => {
    const log = await EmbeddedLog.open({
      dir,
      interceptWrite: (ops, write) => (failing ? Promise.reject(new Error('injected write failure')) : write(ops)),
    })
    return { log, config: new EmbeddedConfigLog(log) }
  }, () => rm(dir, { recursive: true, force: true }))
  return Object.assign(under, {
    denseOffsets: true as const,
    failWrites(fail: boolean) {
      failing = fail
    },
    enforceRetention: (now: number) => (under.log as EmbeddedLog).enforceRetention(now),
  })
})
