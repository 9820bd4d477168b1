// The embedded-mode suite goals-counting.test.ts, run unchanged against the Kafka log (one broker, its own topics per server).
process.env.GOALPOST_TEST_LOG = 'kafka'
await import('../goals-counting.test.js')
