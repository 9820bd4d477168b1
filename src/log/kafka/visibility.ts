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

/** Resolves once every partition's last stable offset is past the transaction's records, or at `deadline`. */
export async function untilVisible(reader: PartitionReader, topicMessages: TopicMessages[], sent: RecordMetadata[], deadline: number): Promise<void> {
  const waiting = lastOffsets(topicMessages, sent)
  let pause = POLL_MS
  while (waiting.size > 0 && Date.now() < deadline) {
    for (const [topic, partitions] of waiting) {
      try {
        const stable = await reader.stableOffsets(topic, [...partitions.keys()])
        for (const [p, last] of partitions) if ((stable.get(p) ?? 0) > last) partitions.delete(p)
      } catch {
        // the broker is busy or moving leaders: back off; the deadline bounds the wait
        pause = Math.min(pause * 4, 200)
      }
      if (partitions.size === 0) waiting.delete(topic)
    }
    if (waiting.size > 0) await sleep(pause)
  }
}
