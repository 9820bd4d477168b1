// Every setting is checked at start-up: a bad one stops the real binary before it listens, with a
// message naming the variable and what it accepts.
import t from 'tap'
import { startExpectingExit } from './helpers/index.js'

/** One bad value per variable, and the accepted range the message must state. */
const BAD: Array<[string, string, RegExp]> = [
  ['GOALPOST_PORT', '70000', /an integer from 1 to 65535/],
  ['GOALPOST_EXACT_THRESHOLD', '1.5', /an integer from 1 to 10000000/],
  ['GOALPOST_RETENTION_DAYS', '-3', /an integer from 1 to 3650/],
  ['GOALPOST_SNAPSHOT_INTERVAL_MS', 'soon', /an integer from 50 to 86400000/],
  ['GOALPOST_HOST', 'not a host!', /an IP address or host name/],
  ['GOALPOST_LOG', 'redis', /one of embedded, kafka/],
  ['GOALPOST_KAFKA_BROKERS', 'localhost', /host:port/],
  ['GOALPOST_KAFKA_PREFIX', 'my topic', /A-Z a-z 0-9 \. _ -/],
  ['GOALPOST_KAFKA_SESSION_TIMEOUT_MS', '100', /an integer from 6000 to 1800000/],
  ['GOALPOST_KAFKA_PRODUCE_TIMEOUT_MS', '5s', /an integer from 100 to 600000/],
  ['GOALPOST_ADVERTISE_URL', 'node-1:8080', /an http:\/\/ or https:\/\/ URL/],
  ['GOALPOST_TRUST_PROXY', '10.0.0.0/8,proxy.local', /IP addresses or CIDRs/],
  ['GOALPOST_MAX_HOT_SESSIONS', '-5', /an integer from 1 to 1000000000/],
  ['GOALPOST_ADMIN_TOKEN', 'two words and more', /a token of at least 16 characters without spaces/],
  ['GOALPOST_ADMIN_TOKEN', 'short-token', /a token of at least 16 characters without spaces; got 11 characters/],
  ['GOALPOST_PARTITIONS', '2.5', /an integer from 1 to 1024/],
  ['GOALPOST_BOT_FILTER', 'maybe', /true or false/],
  ['GOALPOST_RATE_LIMIT_SITE', '-1', /a number from 0 to/],
  ['GOALPOST_RATE_LIMIT_CLIENT', 'fast', /a number from 0 to/],
  ['GOALPOST_MAX_PENDING', '0', /an integer from 1 to 10000000/],
  ['GOALPOST_LOG_LEVEL', 'loud', /one of fatal, error, warn, info, debug, trace, silent/],
]

/** Runs `work` over `items`, `limit` at a time: start-ups load every module and the machine is shared. */
async function inBatches<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += limit) await Promise.all(items.slice(i, i + limit).map(work))
}

t.test('each bad setting stops start-up, naming the variable and its accepted range', async (t) => {
  await inBatches(BAD, 2, async ([name, value, range]) => {
    const run = await startExpectingExit({ t, env: { [name]: value } })
    t.not(run.code, 0, `${name}=${value}: exits non-zero (code ${run.code})`)
    t.match(run.stderr, new RegExp(`${name} must be .*${range.source}`), `${name}=${value}: says what it accepts — ${run.stderr.trim()}`)
    t.notMatch(run.stdout, /"msg":"listening"/, `${name}=${value}: never listened`)
  })
})

t.test('a refused admin token is never echoed', async (t) => {
  const run = await startExpectingExit({ t, env: { GOALPOST_ADMIN_TOKEN: 'hunter2-secret' } })
  t.not(run.code, 0)
  t.match(run.stderr, /GOALPOST_ADMIN_TOKEN must be a token of at least 16 characters/)
  t.notMatch(run.stderr + run.stdout, /hunter2/, 'the value does not reach the log')
})

t.test('the Kafka log without a shared admin token is refused', async (t) => {
  const run = await startExpectingExit({ t, env: { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: '127.0.0.1:9', GOALPOST_ADMIN_TOKEN: undefined } })
  t.not(run.code, 0)
  t.match(run.stderr, /GOALPOST_ADMIN_TOKEN must be set when GOALPOST_LOG=kafka: every node of a cluster must share one admin token/)
  t.notMatch(run.stdout, /"msg":"listening"/)
})

t.test('the Kafka log without brokers is refused the same way', async (t) => {
  const run = await startExpectingExit({ t, env: { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: undefined } })
  t.not(run.code, 0)
  t.match(run.stderr, /GOALPOST_KAFKA_BROKERS must name at least one broker/)
})
