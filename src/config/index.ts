import { readFileSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join, dirname } from 'node:path'
import { COMPRESSIONS, type Compression } from '../log/kafka/compression.js'
import { decimal, flag, integer, isBroker, isHost, isHttpUrl, isProxyEntry, list, oneOf, text, type Spec } from './specs.js'

/** Every setting, with the environment variable that overrides it (docs/api.md §6). */
export interface Config {
  port: number
  host: string
  dataDir: string
  log: 'embedded' | 'kafka'
  kafkaBrokers: string[]
  /** topics <prefix>.events, <prefix>.config, <prefix>.state and the consumer group <prefix> */
  kafkaPrefix: string
  /** a member that misses heartbeats this long loses its partitions to the others */
  kafkaSessionTimeoutMs: number
  /** a send the broker has not acknowledged by then is aborted and answered 503 */
  kafkaProduceTimeoutMs: number
  /** the codec of what this node produces to Kafka (events, config, changelog); every codec is read */
  kafkaCompression: Compression
  /** a record batch of the events topic that cannot be read: stop its partition there, or set it aside */
  kafkaUnreadableBatch: 'stop' | 'dead-letter'
  /** the URL other nodes reach this one at for queries; default http://<host>:<port> */
  advertiseUrl?: string
  /** addresses or CIDRs whose X-Forwarded-* headers are believed; none by default */
  trustProxy: string[]
  /** session summaries held in memory per node before the least recently used go to the store */
  maxHotSessions: number
  adminToken?: string
  /** a port of its own for requests between nodes; unset: the public port serves them */
  internalPort?: number
  retentionDays: number
  /** each goal is a backfill over the whole log and day sets in memory: one more answers 409 */
  maxGoalsPerSite: number
  /** partitions of the events topic: the unit of processing and of state */
  partitions: number
  snapshotIntervalMs: number
  /** distinct sessions per site and day held exactly before switching to HyperLogLog */
  exactThreshold: number
  botFilter: boolean
  /** look each event's country up from its client address (docs/api.md §1) */
  countryLookup: boolean
  /** a MaxMind DB country file to look countries up in instead of the packaged one */
  countryDatabase?: string
  /** events per second per site / per client address; 0 = off */
  rateLimitSite: number
  rateLimitClient: number
  /** records waiting for durability above which ingest answers 503 */
  maxPending: number
  logLevel: string
}

/**
 * A setting: the variable that overrides it, and what it accepts. `secret`: a refused value is
 * described by its length, never echoed into logs.
 */
type Setting<T> = { env: string; optional?: true; secret?: true } & Spec<T>

const PINO_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** Every setting (docs/api.md §6 and the README's table), in one place. */
export const SETTINGS: { [K in keyof Config]-?: Setting<NonNullable<Config[K]>> } = {
  port: { env: 'GOALPOST_PORT', ...integer(1, 65535) },
  host: { env: 'GOALPOST_HOST', ...text('an IP address or host name to bind', isHost) },
  dataDir: { env: 'GOALPOST_DATA_DIR', ...text('a directory path', (s) => s.trim() !== '') },
  log: { env: 'GOALPOST_LOG', ...oneOf('embedded', 'kafka') },
  kafkaBrokers: { env: 'GOALPOST_KAFKA_BROKERS', ...list('comma-separated host:port pairs', isBroker) },
  // topics are <prefix>.events, .config, .state: Kafka allows 249 characters of [A-Za-z0-9._-]
  kafkaPrefix: { env: 'GOALPOST_KAFKA_PREFIX', ...text('1 to 200 characters of A-Z a-z 0-9 . _ - (Kafka topic names)', (s) => /^[A-Za-z0-9._-]{1,200}$/.test(s)) },
  // the broker refuses a session timeout outside group.min/max.session.timeout.ms (6 s and 30 min by default)
  kafkaSessionTimeoutMs: { env: 'GOALPOST_KAFKA_SESSION_TIMEOUT_MS', ...integer(6000, 1_800_000) },
  kafkaProduceTimeoutMs: { env: 'GOALPOST_KAFKA_PRODUCE_TIMEOUT_MS', ...integer(100, 600_000) },
  kafkaCompression: { env: 'GOALPOST_KAFKA_COMPRESSION', ...oneOf(...COMPRESSIONS) },
  kafkaUnreadableBatch: { env: 'GOALPOST_KAFKA_UNREADABLE_BATCH', ...oneOf('stop', 'dead-letter') },
  internalPort: { env: 'GOALPOST_INTERNAL_PORT', optional: true, ...integer(1, 65535) },
  advertiseUrl: { env: 'GOALPOST_ADVERTISE_URL', optional: true, ...text('an http:// or https:// URL', isHttpUrl) },
  trustProxy: { env: 'GOALPOST_TRUST_PROXY', ...list('comma-separated IP addresses or CIDRs (IPv4 or IPv6), e.g. 10.0.0.0/8,::1', isProxyEntry) },
  maxHotSessions: { env: 'GOALPOST_MAX_HOT_SESSIONS', ...integer(1, 1_000_000_000) },
  // the token travels as `Authorization: Bearer <token>`, which ends at the first space
  // a short token is guessable; a token is also the key that signs requests between nodes
  adminToken: { env: 'GOALPOST_ADMIN_TOKEN', optional: true, secret: true, ...text('a token of at least 16 characters without spaces', (s) => /^\S{16,}$/.test(s)) },
  retentionDays: { env: 'GOALPOST_RETENTION_DAYS', ...integer(1, 3650) },
  maxGoalsPerSite: { env: 'GOALPOST_MAX_GOALS_PER_SITE', ...integer(1, 100_000) },
  partitions: { env: 'GOALPOST_PARTITIONS', ...integer(1, 1024) },
  snapshotIntervalMs: { env: 'GOALPOST_SNAPSHOT_INTERVAL_MS', ...integer(50, 86_400_000) },
  exactThreshold: { env: 'GOALPOST_EXACT_THRESHOLD', ...integer(1, 10_000_000) },
  botFilter: { env: 'GOALPOST_BOT_FILTER', ...flag },
  countryLookup: { env: 'GOALPOST_COUNTRY_LOOKUP', ...flag },
  countryDatabase: { env: 'GOALPOST_COUNTRY_DATABASE', optional: true, ...text('a path to a MaxMind DB (.mmdb) country file', (s) => s.trim() !== '') },
  rateLimitSite: { env: 'GOALPOST_RATE_LIMIT_SITE', ...decimal(0, 1_000_000_000, ' events a second (0 = off)') },
  rateLimitClient: { env: 'GOALPOST_RATE_LIMIT_CLIENT', ...decimal(0, 1_000_000_000, ' events a second (0 = off)') },
  maxPending: { env: 'GOALPOST_MAX_PENDING', ...integer(1, 10_000_000) },
  logLevel: { env: 'GOALPOST_LOG_LEVEL', ...oneOf(...PINO_LEVELS) },
}

const configDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config')

function readJson(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * Reads config/default.json, then config/<NODE_ENV>.json, then the environment; every value is
 * checked. Throws naming the first unusable variable and what it accepts.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const files = [join(configDir, 'default.json'), ...(env.NODE_ENV ? [join(configDir, `${env.NODE_ENV}.json`)] : [])]
  const values: Record<string, unknown> = {}
  const origin: Record<string, string> = {}
  for (const file of files) {
    for (const [key, value] of Object.entries(readJson(file))) {
      if (!(key in SETTINGS)) throw new Error(`${file}: unknown setting "${key}"; the settings are ${Object.keys(SETTINGS).join(', ')}`)
      values[key] = value
      origin[key] = `(set in ${file}) `
    }
  }
  for (const [key, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const raw = env[setting.env]
    if (raw !== undefined && raw !== '') {
      const parsed = setting.parse(raw)
      if (parsed === undefined || !setting.valid(parsed)) throw new Error(`${setting.env} must be ${setting.accepts}; got ${shown(setting, raw)}`)
      values[key] = parsed
      origin[key] = ''
      continue
    }
    const value = values[key]
    if (value === undefined && setting.optional) continue
    if (!setting.valid(value)) throw new Error(`${setting.env} ${origin[key] ?? ''}must be ${setting.accepts}; got ${shown(setting, value)}`)
  }
  const config = values as unknown as Config
  if (config.log === 'kafka' && config.kafkaBrokers.length === 0) {
    throw new Error('GOALPOST_KAFKA_BROKERS must name at least one broker (host:port) when GOALPOST_LOG=kafka')
  }
  return config
}

/**
 * What serving needs beyond valid settings: in Kafka mode a token of one's own. A generated token
 * would differ on every node, and every request between nodes would be refused. (Commands that only
 * read the log, such as replay, need no token.)
 */
export function checkServing(config: Config): void {
  if (config.log === 'kafka' && config.adminToken === undefined) {
    throw new Error('GOALPOST_ADMIN_TOKEN must be set when GOALPOST_LOG=kafka: every node of a cluster must share one admin token')
  }
}

const shown = (setting: Setting<unknown>, value: unknown): string =>
  setting.secret && typeof value === 'string' ? `${value.length} characters` : JSON.stringify(value)
