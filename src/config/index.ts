import { readFileSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join, dirname } from 'node:path'

/** Every setting, with the environment variable that overrides it (API.md §6). */
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
  /** the URL other nodes reach this one at for queries; default http://<host>:<port> */
  advertiseUrl?: string
  /** addresses or CIDRs whose X-Forwarded-* headers are believed; none by default */
  trustProxy: string[]
  /** session summaries held in memory per node before the least recently used go to the store */
  maxHotSessions: number
  adminToken?: string
  retentionDays: number
  /** partitions of the events topic: the unit of processing and of state */
  partitions: number
  snapshotIntervalMs: number
  /** distinct sessions per site and day held exactly before switching to HyperLogLog */
  exactThreshold: number
  botFilter: boolean
  /** events per second per site / per client address; 0 = off */
  rateLimitSite: number
  rateLimitClient: number
  /** records waiting for durability above which ingest answers 503 */
  maxPending: number
  logLevel: string
}

const ENV: Record<keyof Config, string> = {
  port: 'GOALPOST_PORT',
  host: 'GOALPOST_HOST',
  dataDir: 'GOALPOST_DATA_DIR',
  log: 'GOALPOST_LOG',
  kafkaBrokers: 'GOALPOST_KAFKA_BROKERS',
  kafkaPrefix: 'GOALPOST_KAFKA_PREFIX',
  kafkaSessionTimeoutMs: 'GOALPOST_KAFKA_SESSION_TIMEOUT_MS',
  kafkaProduceTimeoutMs: 'GOALPOST_KAFKA_PRODUCE_TIMEOUT_MS',
  advertiseUrl: 'GOALPOST_ADVERTISE_URL',
  trustProxy: 'GOALPOST_TRUST_PROXY',
  maxHotSessions: 'GOALPOST_MAX_HOT_SESSIONS',
  adminToken: 'GOALPOST_ADMIN_TOKEN',
  retentionDays: 'GOALPOST_RETENTION_DAYS',
  partitions: 'GOALPOST_PARTITIONS',
  snapshotIntervalMs: 'GOALPOST_SNAPSHOT_INTERVAL_MS',
  exactThreshold: 'GOALPOST_EXACT_THRESHOLD',
  botFilter: 'GOALPOST_BOT_FILTER',
  rateLimitSite: 'GOALPOST_RATE_LIMIT_SITE',
  rateLimitClient: 'GOALPOST_RATE_LIMIT_CLIENT',
  maxPending: 'GOALPOST_MAX_PENDING',
  logLevel: 'GOALPOST_LOG_LEVEL',
}

const configDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config')

function readJson(file: string): Partial<Config> {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}
}

function coerce(key: keyof Config, raw: string, like: unknown): unknown {
  if (key === 'kafkaBrokers' || key === 'trustProxy') return raw.split(',').map((s) => s.trim()).filter(Boolean)
  if (typeof like === 'number') {
    const n = Number(raw)
    if (!Number.isFinite(n) || n < 0) throw new Error(`${ENV[key]} must be a non-negative number, got "${raw}"`)
    return n
  }
  if (typeof like === 'boolean') return !/^(0|false|no|off)$/i.test(raw)
  return raw
}

/**
 * Reads config/default.json, then config/<NODE_ENV>.json, then the environment.
 * Throws with the offending variable named when a value is unusable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const base = readJson(join(configDir, 'default.json')) as Config
  const config: Config = { ...base, ...(env.NODE_ENV ? readJson(join(configDir, `${env.NODE_ENV}.json`)) : {}) }
  for (const key of Object.keys(ENV) as (keyof Config)[]) {
    const raw = env[ENV[key]]
    if (raw !== undefined && raw !== '') (config as unknown as Record<string, unknown>)[key] = coerce(key, raw, base[key])
  }
  if (config.log !== 'embedded' && config.log !== 'kafka') throw new Error(`GOALPOST_LOG must be embedded or kafka, got "${config.log}"`)
  if (!Number.isInteger(config.retentionDays) || config.retentionDays < 1) throw new Error('GOALPOST_RETENTION_DAYS must be a positive integer')
  if (!Number.isInteger(config.partitions) || config.partitions < 1) throw new Error('GOALPOST_PARTITIONS must be a positive integer')
  return config
}
