import { join } from 'node:path'
import type { Config } from '../config/index.js'
import { EmbeddedConfigLog, EmbeddedLog } from './embedded/index.js'
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

export async function openLog(config: Config): Promise<OpenedLog> {
  if (config.log === 'kafka') throw new Error('GOALPOST_LOG=kafka: the Kafka adapter is not part of this build yet; use the default embedded log')
  const log = await EmbeddedLog.open({ dir: join(config.dataDir, 'log') })
  const events = 'events'
  await log.createTopic({ name: events, partitions: config.partitions, retentionMs: config.retentionDays * 86_400_000 }).catch(async (err) => {
    await log.close()
    throw new Error(`${(err as Error).message}; the partition count is fixed when the data directory is created, so GOALPOST_PARTITIONS must keep its first value`)
  })
  const configLog = new EmbeddedConfigLog(log)
  return { log, config: configLog, events, close: async () => (await configLog.close(), await log.close()) }
}
