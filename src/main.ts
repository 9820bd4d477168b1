import { join } from 'node:path'
import { pino } from 'pino'
import { loadConfig } from './config/index.js'
import { EmbeddedLog, EmbeddedConfigLog } from './log/index.js'
import { Catalog } from './catalog/index.js'
import { StateStore } from './store/index.js'
import { StreamProcessor } from './stream/index.js'
import { HttpServer } from './http/index.js'
import { ingestRoutes } from './ingest/index.js'
import { apiRoutes, opsRoutes } from './api/index.js'
import { Authenticator, LoginLimiter, resolveAdminToken, startLoginPruning } from './auth/index.js'
import { createMetrics } from './metrics/index.js'
import { initHash } from './sketch/index.js'

const EVENTS = 'events'
const LOGIN_PRUNE_EVERY_MS = 3_600_000

/** Wiring only: each part is built from its neighbours; the data path reads top to bottom. */
async function main(): Promise<void> {
  const config = loadConfig()
  const logger = pino({ level: config.logLevel })
  await initHash()
  const adminToken = resolveAdminToken(config.dataDir, config.adminToken, (token, file) => {
    // printed once, on the first start only; the file keeps it (mode 0600)
    process.stdout.write(`\nGoalpost admin token (stored in ${file}, shown only now):\n\n  ${token}\n\n`)
  })

  if (config.log === 'kafka') throw new Error('GOALPOST_LOG=kafka: the Kafka adapter is not part of this build yet; use the default embedded log')
  const log = await EmbeddedLog.open({ dir: join(config.dataDir, 'log'), onError: (err, where) => logger.error({ err }, `log: ${where}`) })
  await log.createTopic({ name: EVENTS, partitions: config.partitions, retentionMs: config.retentionDays * 86_400_000 }).catch((err) => {
    throw new Error(`${(err as Error).message}; the partition count is fixed when the data directory is created, so GOALPOST_PARTITIONS must keep its first value`)
  })
  const catalog = new Catalog(new EmbeddedConfigLog(log), { onProblem: (message, fields) => logger.warn(fields, message) })
  await catalog.load()
  startLoginPruning(catalog, LOGIN_PRUNE_EVERY_MS, (err) => logger.error({ err }, 'pruning expired logins'))
  const store = await StateStore.open(join(config.dataDir, 'state'))
  const stream = new StreamProcessor({
    log, store, catalog, topic: EVENTS,
    exactThreshold: config.exactThreshold,
    snapshotIntervalMs: config.snapshotIntervalMs,
    retentionDays: config.retentionDays,
    onError: (err, where) => logger.error({ err }, `stream: ${where}`),
    onProgress: (message, fields) => logger.info(fields, message),
  })

  const metrics = createMetrics()
  metrics.gauge('goalpost_log_pending_records', 'Records waiting for a durable append', () => log.pending())
  metrics.gauge('goalpost_stream_lag_records', 'Records in the log not yet folded into state', async () => (await stream.lag()).reduce((a, b) => a + b, 0))
  metrics.gauge('goalpost_state_hot_sessions', 'Session summaries held in memory', () => stream.parts.reduce((n, p) => n + p.summaries.size, 0))
  metrics.gauge('goalpost_state_conversions', 'Converted-session entries held (goal x day)', () =>
    stream.parts.reduce((n, p) => n + [...p.goals.values()].reduce((m, g) => m + g.size, 0), 0))

  const server = new HttpServer({
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed'),
    onResponse: (req, status) => metrics.countResponse(req.path, status),
    trustProxy: config.trustProxy,
  })
  const auth = new Authenticator(catalog, adminToken)
  ingestRoutes(server, {
    log, topic: EVENTS, catalog, auth, metrics,
    retentionDays: config.retentionDays, botFilter: config.botFilter, maxPending: config.maxPending,
    rateLimitSite: config.rateLimitSite, rateLimitClient: config.rateLimitClient,
    onError: (err) => logger.error({ err }, 'append failed'),
  })
  apiRoutes(server, { catalog, auth, stream, config, logins: new LoginLimiter() })
  opsRoutes(server, { stream, log, metrics })

  // listen first: /healthz answers and /readyz says 503 while state is restored
  const port = await server.listen(config.host, config.port)
  logger.info({ port, host: config.host, dataDir: config.dataDir, log: config.log }, 'listening')
  await stream.start()
  logger.info({ partitions: stream.parts.length }, 'ready')

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping')
    server.close()
    await stream.stop()
    await log.close()
    await store.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

main().catch((err) => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : ''
  const hint = /lock/i.test(cause) ? ' (is another goalpost running on this data directory?)' : ''
  process.stderr.write(`goalpost: ${err instanceof Error ? err.message : String(err)}${cause}${hint}\n`)
  process.exit(1)
})
