/**
 * State that moves between nodes (Kafka Streams' changelog): every write a partition task makes to
 * its local store also goes, first, to a compacted topic with one partition per events partition,
 * keyed by store key. A node taking a partition over restores its store from that topic and then
 * replays only the events after the restored offset, so takeover time follows state size, not the
 * retained history.
 */
import type { EventLog, ProducerRecord } from '../log/index.js'
import type { Op, StateStore } from '../store/index.js'

/** a deletion travels as an empty value (compaction keeps only the latest value of a key) */
const TOMBSTONE = Buffer.alloc(0)
const CHUNK = 5000

export interface Changelog {
  /** durably appends a partition's store operations; resolves with the changelog's end offset after them */
  write(partition: number, ops: Op[]): Promise<number>
  /**
   * Makes the local store's copy of a partition current: unchanged when this store wrote the
   * changelog's latest records itself, else replaced by the changelog's content.
   */
  restore(partition: number, store: StateStore, onProgress?: (records: number) => void): Promise<void>
}

export class LogChangelog implements Changelog {
  readonly #log: EventLog
  readonly #topic: string

  constructor(log: EventLog, topic: string) {
    this.#log = log
    this.#topic = topic
  }

  async write(partition: number, ops: Op[]): Promise<number> {
    const timestamp = Date.now()
    const records: ProducerRecord[] = ops.map((op) => ({
      key: op.key, partition, timestamp, value: op.type === 'put' ? op.value : TOMBSTONE,
    }))
    if (records.length) await this.#log.append(this.#topic, records)
    return this.#log.endOffset(this.#topic, partition)
  }

  async restore(partition: number, store: StateStore, onProgress?: (records: number) => void): Promise<void> {
    const end = await this.#log.endOffset(this.#topic, partition)
    if ((await store.changelogEnd(partition)) === end) return
    let from = await this.#log.beginOffset(this.#topic, partition)
    // an empty changelog has nothing newer than the local store
    if (from >= end) return
    await store.clearPartition(partition)
    let restored = 0
    while (from < end) {
      const records = await this.#log.read(this.#topic, partition, from, CHUNK)
      const mine = records.filter((r) => r.offset < end)
      if (mine.length === 0) break
      await store.write(mine.map((r): Op => (r.value.length === 0 ? { type: 'del', key: r.key } : { type: 'put', key: r.key, value: r.value })))
      restored += mine.length
      onProgress?.(restored)
      from = mine[mine.length - 1].offset + 1
    }
    await store.write([store.changelogEndOp(partition, end)])
  }
}
