// The embedded-mode suite ingest-batch.test.ts, run unchanged against the Kafka log (one broker, its own topics per server).
process.env.GOALPOST_TEST_LOG = 'kafka'
await import('../ingest-batch.test.js')
