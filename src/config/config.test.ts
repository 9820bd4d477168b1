import t from 'tap'
import { loadConfig } from './index.js'

t.test('defaults match API.md §6', async (t) => {
  const c = loadConfig({})
  t.equal(c.port, 8080)
  t.equal(c.host, '0.0.0.0')
  t.equal(c.dataDir, './data')
  t.equal(c.log, 'embedded')
  t.equal(c.retentionDays, 90)
  t.equal(c.adminToken, undefined)
})

t.test('the environment overrides config files', async (t) => {
  const c = loadConfig({ GOALPOST_PORT: '9000', GOALPOST_KAFKA_BROKERS: 'a:9092, b:9092', GOALPOST_BOT_FILTER: 'false', GOALPOST_ADMIN_TOKEN: 'x' })
  t.equal(c.port, 9000)
  t.same(c.kafkaBrokers, ['a:9092', 'b:9092'])
  t.equal(c.botFilter, false)
  t.equal(c.adminToken, 'x')
})

t.test('unusable values name their variable', async (t) => {
  t.throws(() => loadConfig({ GOALPOST_PORT: 'abc' }), /GOALPOST_PORT/)
  t.throws(() => loadConfig({ GOALPOST_LOG: 'redis' }), /GOALPOST_LOG/)
  t.throws(() => loadConfig({ GOALPOST_RETENTION_DAYS: '0' }), /GOALPOST_RETENTION_DAYS/)
})
