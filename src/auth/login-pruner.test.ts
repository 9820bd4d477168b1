import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Catalog } from '../catalog/index.js'
import { EmbeddedConfigLog, EmbeddedLog } from '../log/index.js'
import { pruneLogins } from './index.js'

t.test('expired login records are deleted from the catalog and the config log', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-logins-'))
  const log = await EmbeddedLog.open({ dir })
  const config = new EmbeddedConfigLog(log)
  t.teardown(async () => {
    await config.close()
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  const catalog = new Catalog(config)
  await catalog.load()
  await catalog.put('login', 'expired', { id: 'expired', user_id: 'u', expires_at: 1000 })
  await catalog.put('login', 'live', { id: 'live', user_id: 'u', expires_at: 9000 })
  t.equal(await pruneLogins(catalog, 5000), 1)
  t.equal(catalog.login('expired'), undefined)
  t.ok(catalog.login('live'))
  t.same((await config.load()).map((r) => r.id), ['live'], 'gone from the log too')
  t.equal(await pruneLogins(catalog, 5000), 0, 'nothing left to prune')
})
