/**
 * The event log, in Kafka's shape: named topics split into partitions, each an append-only
 * sequence of records addressed by increasing offsets. The embedded LevelDB log and the Kafka
 * adapter both implement it, so the stream processor cannot tell them apart.
 *
 * Offsets increase but are NOT dense: in Kafka every transaction's commit marker takes an offset
 * that no consumer sees (the embedded log happens to be dense). A consumer resumes from the offset
 * of the last record it processed + 1 and measures progress against endOffset — never by counting
 * records.
 */
import type { UnreadableBatch } from './errors.js'

/** A record to append. The key chooses the partition (same key, same partition, same order). */
export interface ProducerRecord {
  key: string
  value: Buffer
  /** an explicit partition (a changelog follows its state's partition); else the key decides */
  partition?: number
  /** record time, epoch ms: time-based retention reads it */
  timestamp: number
  /**
   * The value already decoded by an in-process producer. A log that hands records to consumers in
   * the same process may pass it along so they skip decoding `value` again (read-only for them);
   * records read back from storage or a broker never carry it.
   */
  decoded?: unknown
}

export interface LogRecord extends Omit<ProducerRecord, 'partition'> {
  partition: number
  offset: number
}

export interface TopicSpec {
  name: string
  partitions: number
  /** records older than this are deleted; undefined keeps everything */
  retentionMs?: number
  /** keep only the latest record per key (Kafka: cleanup.policy=compact); the embedded log ignores it */
  compacted?: boolean
  /** the largest record the topic takes (Kafka: max.message.bytes); the embedded log has no limit */
  maxMessageBytes?: number
}

/** Called with consecutive records of one partition, in offset order. */
export type RecordHandler = (records: LogRecord[]) => Promise<void> | void

export interface Subscription {
  /** stops delivery; resolves once no handler call is running */
  close(): Promise<void>
}

export interface EventLog {
  /** creates the topic when missing; idempotent */
  createTopic(spec: TopicSpec): Promise<void>
  partitionsOf(topic: string): number
  partitionFor(topic: string, key: string): number
  /**
   * Appends durably: resolves only once every record is fsynced (embedded) or acknowledged by
   * all in-sync replicas (Kafka). All or nothing: on rejection none of the records is readable.
   */
  append(topic: string, records: ProducerRecord[]): Promise<void>
  /** earliest retained offset of a partition */
  beginOffset(topic: string, partition: number): Promise<number>
  /**
   * past every durable record: the next record gets this offset or a later one (embedded: one
   * past the last record; Kafka: the last stable offset, which read_committed consumers reach —
   * it also steps over commit markers). Appends still waiting for durability are not counted.
   */
  endOffset(topic: string, partition: number): Promise<number>
  /**
   * up to `max` durable records with offsets from `from` on (fewer at the end of the partition);
   * a `from` below beginOffset starts at beginOffset. Continue from the last record's offset + 1.
   */
  read(topic: string, partition: number, from: number, max: number): Promise<LogRecord[]>
  /**
   * Delivers every record from `from` on, then new ones as they are appended. One handler call at
   * a time per subscription; the next batch waits for the handler's promise (backpressure).
   * Only durable records are delivered. If the handler throws, delivery stops and the
   * subscription's close() rejects with that error.
   */
  subscribe(topic: string, partition: number, from: number, handler: RecordHandler): Subscription
  /**
   * Joins a consumer group for `topic`: the log assigns this member a share of the partitions and
   * delivers their records to `listener`. A rebalance revokes only the partitions that move
   * (`kept` tells where the others resume; a listener without it has them revoked and assigned
   * again). The offsets that count live beside the consumer's state, not in the group: `assigned`
   * answers where each partition resumes. The embedded log is a group of one.
   */
  join(topic: string, group: string, member: MemberInfo, listener: GroupListener): Promise<Membership>
  /**
   * Claims one partition for a writer named `writerId` (Kafka: a transactional producer with that
   * id): every earlier writer of the same name is fenced — its appends are refused from now on
   * with LOG_FENCED — and whatever append it left under way is completed or aborted before this
   * resolves, so a read that starts afterwards sees all that any earlier writer will ever have
   * written. Absent where state never moves between machines (the embedded log).
   */
  claim?(topic: string, partition: number, writerId: string): Promise<PartitionWriter>
  /** number of records waiting for durability: the ingest backpressure signal */
  pending(): number
  /** true while the log can take appends */
  healthy(): boolean
  close(): Promise<void>
}

/** The one writer of a partition, until another claims it (EventLog.claim). */
export interface PartitionWriter {
  /**
   * Appends durably, all or nothing, to the claimed partition (each record's `partition` is
   * ignored), and resolves once the records are readable with the partition's end right after
   * them: the end a reader sees as long as nobody writes the partition after this writer. Appends
   * run one at a time, in call order. Rejects with LOG_FENCED once another writer claimed the
   * partition, and with LOG_OUTCOME_UNKNOWN when a commit went unanswered.
   */
  append(records: ProducerRecord[]): Promise<number>
  /** false once an append failed in a way that leaves this writer unable to write again (fenced, or an unknown outcome) */
  readonly usable: boolean
  close(): Promise<void>
}

/** What a member tells the rest of its group: where it answers queries for the partitions it owns. */
export interface MemberInfo {
  /** base URL of this node's HTTP server, e.g. http://10.0.0.5:8080 */
  url: string
}

export interface GroupListener {
  /**
   * These partitions are now this member's. Resolves with the offset each one resumes from (its
   * restored state's offset); no record of a partition is delivered before this resolves.
   */
  assigned(partitions: number[]): Promise<Map<number, number>>
  /**
   * These partitions are leaving this member. No record of them is delivered after this is called;
   * resolve once their state is snapshotted and released.
   */
  revoked(partitions: number[]): Promise<void>
  /**
   * These partitions stay with this member across a rebalance. Resolves with the offset each one
   * resumes from (where its state is); no record of them is delivered before this resolves.
   */
  kept?(partitions: number[]): Promise<Map<number, number>>
  /** a rebalance started: delivery stops until it ends, and some partitions may move */
  rebalancing?(): void
  /** consecutive records of one partition, in offset order; the next call waits for this one */
  records(partition: number, records: LogRecord[]): Promise<void>
  /** delivery of a partition failed (the handler threw, or the log lost the partition) */
  failed?(partition: number, err: unknown): void
  /**
   * A record batch of the partition cannot be read, even after a few tries (a corrupt batch, a
   * codec's data that does not decompress). Resolve true once it is set aside (its records are
   * skipped: the log goes on past it), false to stop the partition there; a stopped partition
   * tries the batch again now and then, and asks again. Absent: stop.
   */
  unreadable?(partition: number, err: UnreadableBatch): Promise<boolean>
  /** the group's latest assignment for this member, as soon as it is known (before any revoke or assign) */
  joined?(partitions: number[]): void
}

/** One member of a group, as every member sees it. */
export interface GroupMember {
  url: string
  partitions: number[]
  /** true for the member asking */
  self: boolean
}

export interface Membership {
  /** the group's current members and their partitions (a fresh view, fetched when needed) */
  members(): Promise<GroupMember[]>
  /** the partitions this member owns right now */
  owned(): number[]
  /** leaves the group: revokes (and awaits `revoked`) every owned partition first */
  leave(): Promise<void>
  /**
   * false when this member cannot vouch that it still owns its partitions: the group has not
   * confirmed it (a join or a heartbeat answered) for long enough that it may have been expelled
   * without knowing it — a node that was paused past its session timeout. Absent: always owned.
   */
  current?(): boolean
  /**
   * Hands partitions this member owns to the listener again (revoked, then assigned), for a
   * listener that lost their state — once the group has confirmed, after this call, that the
   * member still owns them; a member that was expelled rejoins instead.
   */
  restart?(partitions: number[]): void
}

/**
 * A compacted topic: the latest value per key wins, a null value deletes the key. Sites, users,
 * keys, login sessions and goals live here; every node materializes all of it.
 */
export interface ConfigRecord {
  kind: string
  id: string
  /** null deletes */
  value: unknown
}

export interface ConfigLog {
  /** every live record, in write order */
  load(): Promise<ConfigRecord[]>
  /** durable like EventLog.append; resolves after local watchers have applied it */
  put(record: ConfigRecord): Promise<void>
  /** called for every put after load, including this node's own */
  watch(handler: (record: ConfigRecord) => void): void
  /** resolves once this view has applied every record written anywhere before the call */
  sync(): Promise<void>
  close(): Promise<void>
}
