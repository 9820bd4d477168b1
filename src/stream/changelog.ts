/**
 * State that moves between nodes (Kafka Streams' changelog): every write a partition task makes to
 * its local store also goes, first, to a compacted topic with one partition per events partition,
 * keyed by store key. A node taking a partition over restores its store from that topic and then
 * replays only the events after the restored offset, so takeover time follows state size, not the
 * retained history.
 *
 * One writer per partition, enforced by the broker: a node that is given a partition first claims
 * its changelog partition (a transactional producer whose id names the partition), which fences
 * every earlier writer — a node paused past its session timeout that wakes up still holding the
 * partition cannot write another record — and completes or aborts what it left open. Only then does
 * the new owner read the changelog, so what it restores is everything the earlier owners will ever
 * have written. A write refused as fenced (or one whose outcome is unknown) loses the partition:
 * the task stops without writing its local store, and that store's copy of the partition is no
 * longer trusted over the changelog.
 */
import type { EventLog, PartitionWriter, ProducerRecord } from '../log/index.js'
import type { Op, StateStore } from '../store/index.js'

/** a deletion travels as an empty value (compaction keeps only the latest value of a key) */
const TOMBSTONE = Buffer.alloc(0)
const CHUNK = 5000
/** a changelog end no changelog has: the local store's copy of the partition is not to be trusted */
const UNTRUSTED = -1

/** What a partition task sees of the changelog (the processor binds it to the task's claim). */
export interface Changelog {
  /** durably appends a partition's store operations; resolves with the changelog's end offset after them */
  write(partition: number, ops: Op[]): Promise<number>
  /**
   * Makes the local store's copy of a partition current: unchanged when this store wrote the
   * changelog's latest records itself, else replaced by the changelog's content.
   */
  restore(partition: number, store: StateStore, onProgress?: (records: number) => void): Promise<void>
}

/** The changelog topic: claimed partition by partition by whoever owns them. */
export interface ChangelogTopic {
  /** Fences every earlier writer of the partition's changelog and completes what it left open. */
  claim(partition: number): Promise<ClaimedChangelog>
}

/** One partition's changelog while this node owns it. */
export interface ClaimedChangelog {
  readonly partition: number
  /**
   * Makes the local store's copy of the partition current: kept when the changelog's end is the
   * one this store recorded with its last write (nobody wrote since), else replaced by the
   * changelog's content. Resolves with the number of records copied (0: the store was current).
   */
  restore(store: StateStore, onProgress?: (records: number) => void): Promise<number>
  /**
   * Appends store operations; resolves once they are readable, with the changelog's end right
   * after them. Rejects with ChangelogLost when another owner claimed the partition since (or the
   * outcome of the write is unknown): the partition is not this node's to write any more.
   */
  write(ops: Op[]): Promise<number>
  /** lets go of the writer, after the task's last write */
  release(): Promise<void>
}

/** The partition's changelog was claimed by another owner, or a write's outcome is unknown. */
export class ChangelogLost extends Error {
  constructor(readonly partition: number, cause: unknown) {
    super(`partition ${partition}: the changelog is no longer this node's to write (${cause instanceof Error ? cause.message : String(cause)})`, { cause })
    this.name = 'ChangelogLost'
  }
}

export class LogChangelog implements ChangelogTopic {
  readonly #log: EventLog
  readonly #topic: string
  readonly #writerPrefix: string

  /** `writerPrefix` + partition names each partition's writer: the same on every node of the cluster */
  constructor(log: EventLog, topic: string, writerPrefix: string) {
    this.#log = log
    this.#topic = topic
    this.#writerPrefix = writerPrefix
  }

  async claim(partition: number): Promise<ClaimedChangelog> {
    if (!this.#log.claim) throw new Error('this log cannot fence the writers of a changelog')
    const writer = await this.#log.claim(this.#topic, partition, `${this.#writerPrefix}-${partition}`)
    return new Claimed(this.#log, this.#topic, partition, writer)
  }
}

class Claimed implements ClaimedChangelog {
  readonly #log: EventLog
  readonly #topic: string
  readonly #writer: PartitionWriter
  #store: StateStore | undefined
  #lost: ChangelogLost | undefined
  /** the changelog's end after the last write (or at the restore) */
  #end = UNTRUSTED

  constructor(log: EventLog, topic: string, readonly partition: number, writer: PartitionWriter) {
    this.#log = log
    this.#topic = topic
    this.#writer = writer
  }

  async restore(store: StateStore, onProgress?: (records: number) => void): Promise<number> {
    this.#store = store
    const p = this.partition
    // after the claim nothing is left open: this end is past all that anyone wrote to the partition
    const end = (this.#end = await this.#log.endOffset(this.#topic, p))
    if ((await store.changelogEnd(p)) === end) return 0
    let from = await this.#log.beginOffset(this.#topic, p)
    // an empty changelog has nothing newer than the local store
    if (from >= end) return 0
    await store.clearPartition(p)
    let restored = 0
    while (from < end) {
      const records = await this.#log.read(this.#topic, p, from, CHUNK)
      const mine = records.filter((r) => r.offset < end)
      if (mine.length === 0) break
      await store.write(mine.map((r): Op => (r.value.length === 0 ? { type: 'del', key: r.key } : { type: 'put', key: r.key, value: r.value })))
      restored += mine.length
      onProgress?.(restored)
      from = mine[mine.length - 1].offset + 1
    }
    await store.write([store.changelogEndOp(p, end)])
    return restored
  }

  async write(ops: Op[]): Promise<number> {
    if (this.#lost) throw this.#lost
    if (ops.length === 0) return this.#end
    const timestamp = Date.now()
    const records: ProducerRecord[] = ops.map((op) => ({ key: op.key, timestamp, value: op.type === 'put' ? op.value : TOMBSTONE }))
    try {
      return (this.#end = await this.#writer.append(records))
    } catch (err) {
      if (this.#writer.usable) throw err
      this.#lost = new ChangelogLost(this.partition, err)
      // the changelog may hold what this store does not (a newer owner's writes, or this write)
      await this.#store?.write([this.#store.changelogEndOp(this.partition, UNTRUSTED)]).catch(() => undefined)
      throw this.#lost
    }
  }

  release(): Promise<void> {
    return this.#writer.close()
  }
}
