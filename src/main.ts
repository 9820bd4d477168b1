import { hostname } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { checkServing, loadConfig } from './config/index.js'
import { openLog } from './log/index.js'
import { Catalog } from './catalog/index.js'
import { StateStore } from './store/index.js'
import { LogChangelog, MEMORY_KINDS, StreamProcessor } from './stream/index.js'
import { InteractiveQueries } from './query/index.js'
import { HttpServer } from './http/index.js'
import { ingestRoutes } from './ingest/index.js'
import {
  apiRoutes, assetRoutes, clusterRoutes, dashboardRoutes, internalKey, internalRoutes, liveRoutes, opsRoutes, remotePartials,
} from './api/index.js'
import { Authenticator, LoginLimiter, resolveAdminToken, startLoginPruning } from './auth/index.js'
import { createMetrics } from './metrics/index.js'
import { initHash } from './sketch/index.js'
import { openCountryLookup } from './agent/index.js'

const LOGIN_PRUNE_EVERY_MS = 3_600_000
/** how often the analytics' per-day joins are checked and warmed (InteractiveQueries.warm): cheap once warm */
const WARM_JOINS_EVERY_MS = 60_000

/** Wiring only: each part is built from its neighbours; the data path reads top to bottom. */
async function main(): Promise<void> {
  const config = loadConfig()
  checkServing(config)
  const logger = pino({ level: config.logLevel })
  await initHash()
  const adminToken = resolveAdminToken(config.dataDir, config.adminToken, (token, file) => {
    // printed once, on the first start only; the file keeps it (mode 0600)
    process.stdout.write(`\nGoalpost admin token (stored in ${file}, shown only now):\n\n  ${token}\n\n`)
  })
  // where other nodes reach this one: the internal port when it has one
  const self = config.advertiseUrl ?? `http://${/^(0\.0\.0\.0|::)$/.test(config.host) ? hostname() : config.host}:${config.internalPort ?? config.port}`

  const logs = await openLog(config, {
    self,
    onError: (err, where) => logger.error({ err }, `log: ${where}`),
    onClientLog: (level, message, extra) => logger[level](extra, `kafka: ${message}`),
  })
  const { log } = logs
  const catalog = new Catalog(logs.config, { onProblem: (message, fields) => logger.warn(fields, message) })
  await catalog.load()
  startLoginPruning(catalog, LOGIN_PRUNE_EVERY_MS, (err) => logger.error({ err }, 'pruning expired logins'))
  const store = await StateStore.open(join(config.dataDir, 'state'))
  const stream = new StreamProcessor({
    log, store, catalog, topic: logs.events, group: config.kafkaPrefix, member: { url: self },
    // each partition's changelog writer is `<prefix>-state-<partition>` on every node: a new owner fences the old one
    changelog: logs.state ? new LogChangelog(log, logs.state, `${config.kafkaPrefix}-state`) : undefined,
    exactThreshold: config.exactThreshold,
    snapshotIntervalMs: config.snapshotIntervalMs,
    retentionDays: config.retentionDays,
    maxHotSessions: config.maxHotSessions,
    onError: (err, where) => logger.error({ err }, `stream: ${where}`),
    onProgress: (message, fields) => logger.info(fields, message),
    onDeadLetter: (partition, offset, err) => logger.error({ err, partition, offset }, 'record set aside: it cannot be folded'),
    unreadableBatches: config.kafkaUnreadableBatch,
  })
  const key = internalKey(adminToken)
  const queries = new InteractiveQueries({ processor: stream, catalog, self, remote: config.log === 'kafka' ? remotePartials(key) : undefined })
  queries.startWarming(WARM_JOINS_EVERY_MS, (err) => logger.error({ err }, 'warming the analytics\' joins'))

  const metrics = createMetrics()
  metrics.gauge('goalpost_log_pending_records', 'Records waiting for a durable append', () => log.pending())
  metrics.gauge('goalpost_stream_lag_records', 'Records in the log not yet folded into state', async () =>
    [...(await stream.lag()).values()].reduce((n, p) => n + Math.max(0, p.end - p.offset), 0))
  metrics.gauge('goalpost_stream_partitions', 'Partitions of the events topic owned by this node', () => stream.parts.length)
  metrics.gauge('goalpost_stream_partitions_stopped', 'Partitions of this node whose folding stopped (GET /api/status says why and where)', () => stream.stops.length)
  metrics.gauge('goalpost_stream_stopped_lag_records', 'Records in the log behind where stopped partitions stand', async () => {
    const ends = await stream.ends(stream.stops.map((s) => s.partition))
    return stream.stops.reduce((n, s) => n + Math.max(0, (ends.get(s.partition) ?? s.offset) - s.offset), 0)
  })
  metrics.gauge('goalpost_stream_dead_letters', 'Records set aside because they cannot be folded', () => stream.deadLetters)
  metrics.gauge('goalpost_state_hot_sessions', 'Session summaries held in memory', () => stream.parts.reduce((n, p) => n + p.summaries.size, 0))
  metrics.gauge('goalpost_state_conversions', 'Converted-session entries held (goal x day)', () =>
    stream.parts.reduce((n, p) => n + [...p.goals.values()].reduce((m, g) => m + g.size, 0), 0))
  for (const kind of MEMORY_KINDS) {
    metrics.gauge(`goalpost_state_${kind}_bytes`, `Bytes of state in memory: ${kind} (docs/architecture.md, Capacity)`, () =>
      [...stream.tasks.values()].reduce((n, task) => n + task.memory(kind), 0))
  }

  const server = new HttpServer({
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'request failed'),
    onResponse: (req, status) => metrics.countResponse(req.path, status),
    trustProxy: config.trustProxy,
  })
  const auth = new Authenticator(catalog, adminToken)
  const logins = new LoginLimiter()
  ingestRoutes(server, {
    log, topic: logs.events, catalog, auth, logins, metrics,
    retentionDays: config.retentionDays, botFilter: config.botFilter, maxPending: config.maxPending,
    rateLimitSite: config.rateLimitSite, rateLimitClient: config.rateLimitClient,
    countryOf: config.countryLookup ? openCountryLookup(config.countryDatabase) : undefined,
    onError: (err) => logger.error({ err }, 'append failed'),
  })
  const api = { catalog, auth, stream, queries, config, logins }
  apiRoutes(server, api)
  clusterRoutes(server, api, { queries, stream, key, self, log: config.log })
  // requests between nodes: on a port of their own when one is set, else beside the public routes
  const internal = config.internalPort === undefined ? server : new HttpServer({
    onError: (err, req) => logger.error({ err, method: req.method, path: req.path }, 'internal request failed'),
    trustProxy: [],
  })
  internalRoutes(internal, { queries, key })
  liveRoutes(server, api, {
    goals: (site, days) => queries.goalList(site, catalog.goalsOf(site.site_id), days),
    onError: (err) => logger.error({ err }, 'live updates'),
  })
  opsRoutes(server, { stream, log, metrics })
  assetRoutes(server)
  dashboardRoutes(server)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping')
    server.close()
    if (internal !== server) internal.close()
    await stream.stop().catch((err) => logger.error({ err }, 'stream: stop'))
    await logs.close()
    await store.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  // listen first: /healthz answers and /readyz says 503 while state is restored; a stop signal
  // during the restore still snapshots the partitions restored so far
  const port = await server.listen(config.host, config.port)
  if (internal !== server) await internal.listen(config.host, config.internalPort!)
  logger.info({ port, host: config.host, dataDir: config.dataDir, log: config.log, advertise: self }, 'listening')
  await stream.start().catch((err) => {
    if (!stopping) throw err
  })
  if (!stopping) logger.info({ partitions: stream.parts.map((p) => p.partition) }, 'ready')
}

main().catch((err) => {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : ''
  const hint = /lock/i.test(cause) ? ' (is another goalpost running on this data directory?)' : ''
  process.stderr.write(`goalpost: ${err instanceof Error ? err.message : String(err)}${cause}${hint}\n`)
  process.exit(1)
})
