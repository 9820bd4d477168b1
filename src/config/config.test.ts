import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadConfig } from './index.js'

t.test('defaults match docs/api.md §6', async (t) => {
  const c = loadConfig({})
  t.equal(c.port, 8080)
  t.equal(c.host, '0.0.0.0')
  t.equal(c.dataDir, './data')
  t.equal(c.log, 'embedded')
  t.equal(c.retentionDays, 90)
  t.equal(c.adminToken, undefined)
  t.equal(c.advertiseUrl, undefined)
  t.same(c.trustProxy, [])
})

t.test('the environment overrides config files', async (t) => {
  const c = loadConfig({
    GOALPOST_PORT: '9000', GOALPOST_KAFKA_BROKERS: 'a:9092, b.example:9093,[::1]:9094', GOALPOST_BOT_FILTER: 'false', GOALPOST_ADMIN_TOKEN: 'x-0123456789abcdef',
    GOALPOST_TRUST_PROXY: '10.0.0.0/8, ::1, 192.168.1.7', GOALPOST_ADVERTISE_URL: 'https://node-1.internal:8443', GOALPOST_RATE_LIMIT_SITE: '2.5',
    GOALPOST_LOG_LEVEL: 'warn', GOALPOST_KAFKA_PREFIX: 't-goalpost-test-AbC_1.x',
  })
  t.equal(c.port, 9000)
  t.same(c.kafkaBrokers, ['a:9092', 'b.example:9093', '[::1]:9094'])
  t.equal(c.botFilter, false)
  t.equal(c.adminToken, 'x-0123456789abcdef')
  t.same(c.trustProxy, ['10.0.0.0/8', '::1', '192.168.1.7'])
  t.equal(c.advertiseUrl, 'https://node-1.internal:8443')
  t.equal(c.rateLimitSite, 2.5)
  t.equal(c.logLevel, 'warn')
  t.equal(c.kafkaPrefix, 't-goalpost-test-AbC_1.x')
})

/** Each bad value, and the accepted range its message must state. */
const BAD: Array<[string, string, RegExp]> = [
  ['GOALPOST_PORT', '70000', /integer from 1 to 65535/],
  ['GOALPOST_PORT', 'abc', /integer from 1 to 65535/],
  ['GOALPOST_PORT', '0', /integer from 1 to 65535/],
  ['GOALPOST_HOST', 'not a host!', /IP address or host name/],
  ['GOALPOST_LOG', 'redis', /one of embedded, kafka/],
  ['GOALPOST_KAFKA_BROKERS', 'localhost', /host:port/],
  ['GOALPOST_KAFKA_BROKERS', 'a:99999', /host:port/],
  ['GOALPOST_KAFKA_PREFIX', 'my topic', /A-Z a-z 0-9 \. _ -/],
  ['GOALPOST_KAFKA_SESSION_TIMEOUT_MS', '100', /integer from 6000 to 1800000/],
  ['GOALPOST_KAFKA_PRODUCE_TIMEOUT_MS', '5s', /integer from 100 to 600000/],
  ['GOALPOST_ADVERTISE_URL', 'node-1:8080', /http:\/\/ or https:\/\/ URL/],
  ['GOALPOST_ADVERTISE_URL', 'ftp://node-1', /http:\/\/ or https:\/\/ URL/],
  ['GOALPOST_TRUST_PROXY', '10.0.0.0/8,proxy.local', /IP addresses or CIDRs/],
  ['GOALPOST_TRUST_PROXY', '10.0.0.0/40', /IP addresses or CIDRs/],
  ['GOALPOST_MAX_HOT_SESSIONS', '-5', /integer from 1 to/],
  ['GOALPOST_ADMIN_TOKEN', 'two words', /without spaces/],
  ['GOALPOST_ADMIN_TOKEN', 'fifteen-chars15', /at least 16 characters/],
  ['GOALPOST_RETENTION_DAYS', '-3', /integer from 1 to 3650/],
  ['GOALPOST_RETENTION_DAYS', '0', /integer from 1 to 3650/],
  ['GOALPOST_PARTITIONS', '2.5', /integer from 1 to 1024/],
  ['GOALPOST_SNAPSHOT_INTERVAL_MS', 'soon', /integer from 50 to 86400000/],
  ['GOALPOST_EXACT_THRESHOLD', '1.5', /integer from 1 to 10000000/],
  ['GOALPOST_BOT_FILTER', 'maybe', /true or false/],
  ['GOALPOST_RATE_LIMIT_SITE', '-1', /number from 0 to/],
  ['GOALPOST_RATE_LIMIT_CLIENT', 'fast', /number from 0 to/],
  ['GOALPOST_MAX_PENDING', '0', /integer from 1 to 10000000/],
  ['GOALPOST_LOG_LEVEL', 'loud', /one of fatal, error, warn, info, debug, trace, silent/],
]

t.test('every bad value stops loading with the variable and its accepted range', async (t) => {
  for (const [name, value, range] of BAD) {
    // a secret is described by its length, never echoed
    const got = name === 'GOALPOST_ADMIN_TOKEN' ? `${value.length} characters` : `"${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`
    t.throws(() => loadConfig({ [name]: value }), { message: new RegExp(`^${name} must be .*${range.source}.*got ${got}`) }, `${name}=${value}`)
  }
})

t.test('the Kafka log needs brokers', async (t) => {
  t.throws(() => loadConfig({ GOALPOST_LOG: 'kafka' }), /GOALPOST_KAFKA_BROKERS must name at least one broker/)
  t.equal(loadConfig({ GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: 'k:9092' }).log, 'kafka')
})

t.test('config files are held to the same ranges, and to known names', async (t) => {
  const name = `test-${randomBytes(4).toString('hex')}`
  const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config', `${name}.json`)
  t.teardown(() => rmSync(file, { force: true }))
  writeFileSync(file, JSON.stringify({ exactThreshold: 1.5 }))
  t.throws(() => loadConfig({ NODE_ENV: name }), /^GOALPOST_EXACT_THRESHOLD \(set in .*\.json\) must be an integer from 1 to 10000000; got 1.5/)
  t.equal(loadConfig({ NODE_ENV: name, GOALPOST_EXACT_THRESHOLD: '64' }).exactThreshold, 64, 'the environment wins')
  writeFileSync(file, JSON.stringify({ exactTreshold: 64 }))
  t.throws(() => loadConfig({ NODE_ENV: name }), /unknown setting "exactTreshold"/)
  writeFileSync(file, '{ nope')
  t.throws(() => loadConfig({ NODE_ENV: name }), /is not valid JSON/)
})
