import { createHash } from 'node:crypto'
import { join } from 'node:path'
import type { Config } from '../config/index.js'
import { EmbeddedConfigLog, EmbeddedLog } from './embedded/index.js'
import { KafkaConfigLog, KafkaLog } from './kafka/index.js'
import type { ConfigLog, EventLog } from './types.js'

/** The logs a node runs on, by GOALPOST_LOG, with the topic names the rest of the node uses. */
export interface OpenedLog {
  log: EventLog
  config: ConfigLog
  events: string
  /** the changelog topic of partition state; absent where state never moves (one machine) */
  state?: string
  close(): Promise<void>
}

export interface LogHooks {
  /** this node's query address: also names its transactional producers, stable across restarts */
  self: string
  onError?(err: unknown, where: string): void
  onClientLog?(level: 'warn' | 'error', message: string, extra: Record<string, unknown>): void
}

/** a changelog record holds one store value; a busy goal's day of converted sessions can be large */
const STATE_MAX_MESSAGE_BYTES = 32 * 1024 * 1024

export async function openLog(config: Config, hooks: LogHooks): Promise<OpenedLog> {
  return config.log === 'kafka' ? openKafka(config, hooks) : openEmbedded(config, hooks)
}

async function openEmbedded(config: Config, hooks: LogHooks): Promise<OpenedLog> {
  const log = await EmbeddedLog.open({ dir: join(config.dataDir, 'log'), onError: hooks.onError })
  const events = 'events'
  await log.createTopic({ name: events, partitions: config.partitions, retentionMs: config.retentionDays * 86_400_000 }).catch(async (err) => {
    await log.close()
    throw new Error(`${(err as Error).message}; the partition count is fixed when the data directory is created, so GOALPOST_PARTITIONS must keep its first value`)
  })
  const configLog = new EmbeddedConfigLog(log)
  return { log, config: configLog, events, close: async () => (await configLog.close(), await log.close()) }
}

async function openKafka(config: Config, hooks: LogHooks): Promise<OpenedLog> {
  if (config.kafkaBrokers.length === 0) throw new Error('GOALPOST_LOG=kafka needs GOALPOST_KAFKA_BROKERS (comma-separated host:port)')
  const prefix = config.kafkaPrefix
  const log = await KafkaLog.open({
    brokers: config.kafkaBrokers,
    clientId: prefix,
    nodeId: createHash('sha256').update(hooks.self).digest('hex').slice(0, 16),
    produceTimeoutMs: config.kafkaProduceTimeoutMs,
    sessionTimeoutMs: config.kafkaSessionTimeoutMs,
    compression: config.kafkaCompression,
    maxPending: config.maxPending * 2,
    onError: hooks.onError,
    onClientLog: hooks.onClientLog,
  })
  const events = `${prefix}.events`
  const state = `${prefix}.state`
  try {
    await log.createTopic({ name: events, partitions: config.partitions, retentionMs: config.retentionDays * 86_400_000 })
    await log.createTopic({ name: state, partitions: config.partitions, compacted: true, maxMessageBytes: STATE_MAX_MESSAGE_BYTES })
    const configLog = await KafkaConfigLog.open(log, `${prefix}.config`)
    return { log, config: configLog, events, state, close: async () => (await configLog.close(), await log.close()) }
  } catch (err) {
    await log.close().catch(() => undefined)
    throw new Error(`${(err as Error).message}; GOALPOST_PARTITIONS must match the partitions of an existing ${events}`, { cause: err })
  }
}
