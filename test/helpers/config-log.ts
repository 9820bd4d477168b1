import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedConfigLog, EmbeddedLog } from '../../src/log/index.js'
import type { Teardown } from './server.js'

/** A real embedded config log in a fresh directory, closed and removed at teardown. */
export async function tempConfigLog(t: Teardown): Promise<EmbeddedConfigLog> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-config-'))
  const log = await EmbeddedLog.open({ dir })
  const config = new EmbeddedConfigLog(log)
  t.teardown(async () => {
    await config.close()
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  return config
}
