import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { logContract, reopenable } from '../contract.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { writeBatch } from './storage.js'

logContract(t, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  let failing = false
  const under = await reopenable(async () => {
    const log = await EmbeddedLog.open({
      dir,
      writer: (db, ops, sync) => (failing ? Promise.reject(Object.assign(new Error('injected write failure'), { code: 'EIO' })) : writeBatch(db, ops, sync)),
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
