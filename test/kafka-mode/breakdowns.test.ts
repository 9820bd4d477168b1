// The embedded-mode suite breakdowns.test.ts, run unchanged against the Kafka log (one broker, its own topics per server).
process.env.GOALPOST_TEST_LOG = 'kafka'
await import('../breakdowns.test.js')
