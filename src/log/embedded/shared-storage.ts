import type { CommitJob, BatchOp } from './commit-queue.js'
import type { HealingDb } from './healing-db.js'

/** What the config keyspace shares with the event log: the database and a group commit over it. */
export interface SharedStorage {
  readonly db: HealingDb
  /** queues a job for the next synchronous LevelDB write; rejects once the log is closed */
  submit(job: CommitJob<BatchOp[]>): Promise<void>
  /** the last config sequence number handed out; config jobs advance it when staged */
  configSeq: number
}
