import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { logContract, reopenable } from '../contract.js'
import { EmbeddedConfigLog, EmbeddedLog } from './index.js'
import { writeFully } from './data-file.js'
import { writeBatch } from './storage.js'

logContract(t, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-log-'))
  let failing = false
  const under = await reopenable(async () => {
    const injected = () => Promise.reject(Object.assign(new Error('injected write failure'), { code: 'EIO' }))
    const log = await EmbeddedLog.open({
      dir,
      writer: (db, ops, sync) => (failing ? injected() : writeBatch(db, ops, sync)),
      frameWriter: (handle, bytes, position) => (failing ? injected() : writeFully(handle, bytes, position)),
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
