// The embedded-mode suite goal-conditions-revenue.test.ts, run unchanged against the Kafka log (one broker, its own topics per server).
process.env.GOALPOST_TEST_LOG = 'kafka'
await import('../goal-conditions-revenue.test.js')
