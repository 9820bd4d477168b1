import t from 'tap'
import { tempConfigLog } from '../../test/helpers/config-log.js'
import { Catalog } from '../catalog/index.js'
import { pruneLogins } from './index.js'

t.test('expired login records are deleted from the catalog and the config log', async (t) => {
  const config = await tempConfigLog(t)
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
