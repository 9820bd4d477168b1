// The embedded-mode suite goal-analytics.test.ts, run unchanged against the Kafka log (one broker, its own topics per server).
process.env.GOALPOST_TEST_LOG = 'kafka'
await import('../goal-analytics.test.js')
