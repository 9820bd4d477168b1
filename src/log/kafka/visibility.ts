/**
 * Kafka answers EndTxn(commit) once the commit is decided and durable, and writes the commit
 * markers just after; until a partition's marker is written, read_committed readers (its last
 * stable offset) stop short of the transaction. An append resolves only once its records are
 * readable everywhere — so a reader that starts after the answer sees them — or, should the broker
 * stall in that short window, at the deadline all the same: the records are committed by then, and
 * will be seen.
 */
import type { RecordMetadata, TopicMessages } from 'kafkajs'
import { sleep } from './deadline.js'
import type { PartitionReader } from './partition-reader.js'

const POLL_MS = 2

/** the last offset each transaction wrote, per topic and partition */
function lastOffsets(topicMessages: TopicMessages[], sent: RecordMetadata[]): Map<string, Map<number, number>> {
  const counts = new Map<string, Map<number, number>>()
  for (const { topic, messages } of topicMessages) {
    const perPartition = counts.get(topic) ?? new Map<number, number>()
    for (const m of messages) perPartition.set(m.partition!, (perPartition.get(m.partition!) ?? 0) + 1)
    counts.set(topic, perPartition)
  }
  const last = new Map<string, Map<number, number>>()
  for (const meta of sent) {
    const n = counts.get(meta.topicName)?.get(meta.partition)
    if (n === undefined || meta.baseOffset === undefined) continue
    const perTopic = last.get(meta.topicName) ?? new Map<number, number>()
    perTopic.set(meta.partition, Number(meta.baseOffset) + n - 1)
    last.set(meta.topicName, perTopic)
  }
  return last
}

interface Wait {
  /** per topic, per partition: the last offset the transaction wrote */
  last: Map<string, Map<number, number>>
  deadline: number
  resolve(): void
}

/**
 * Waits of all transactions in flight, checked together: one ListOffsets per topic for the union
 * of their partitions, one at a time, so that many commits cost the broker one request stream
 * rather than one poll loop each.
 */
export class VisibilityWatcher {
  readonly #reader: PartitionReader
  #waits: Wait[] = []
  #running = false

  constructor(reader: PartitionReader) {
    this.#reader = reader
  }

  /** Resolves once every partition's last stable offset is past the transaction's records, or at `deadline`. */
  wait(topicMessages: TopicMessages[], sent: RecordMetadata[], deadline: number): Promise<void> {
    const last = lastOffsets(topicMessages, sent)
    if (last.size === 0) return Promise.resolve()
    return new Promise((resolve) => {
      this.#waits.push({ last, deadline, resolve })
      if (!this.#running) void this.#run()
    })
  }

  async #run(): Promise<void> {
    this.#running = true
    let pause = POLL_MS
    while (this.#waits.length > 0) {
      const wanted = new Map<string, Set<number>>()
      for (const w of this.#waits) {
        for (const [topic, partitions] of w.last) {
          const set = wanted.get(topic) ?? new Set<number>()
          for (const p of partitions.keys()) set.add(p)
          wanted.set(topic, set)
        }
      }
      const stable = new Map<string, Map<number, number>>()
      try {
        await Promise.all([...wanted].map(async ([topic, set]) => stable.set(topic, await this.#reader.stableOffsets(topic, [...set]))))
        pause = POLL_MS
      } catch {
        // the broker is busy or moving leaders: back off; each wait's deadline bounds it
        pause = Math.min(pause * 4, 200)
      }
      const now = Date.now()
      this.#waits = this.#waits.filter((w) => {
        for (const [topic, partitions] of w.last) {
          for (const [p, last] of partitions) if ((stable.get(topic)?.get(p) ?? 0) > last) partitions.delete(p)
          if (partitions.size === 0) w.last.delete(topic)
        }
        if (w.last.size > 0 && now < w.deadline) return true
        w.resolve()
        return false
      })
      if (this.#waits.length > 0) await sleep(pause)
    }
    this.#running = false
  }
}
