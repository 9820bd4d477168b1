/**
 * Appends waiting for a transaction, and how several of them become one group commit: up to a
 * record and a byte budget (a partition's share of one produce request must stay under the
 * broker's message.max.bytes, 1 MiB by default), the first append always taken whole.
 */
import type { Message, TopicMessages } from 'kafkajs'

export interface PendingAppend {
  topic: string
  messages: Message[]
  bytes: number
  /** epoch ms by which the caller gets an answer (unless a commit's outcome is being resolved) */
  deadline: number
  resolve(): void
  reject(err: unknown): void
}

export interface GroupLimits {
  maxRecords: number
  maxBytes: number
}

/** Takes the head of `queue` as one group commit (removing it from the queue). */
export function takeGroup(queue: PendingAppend[], limits: GroupLimits): PendingAppend[] {
  let taken = 0
  let records = 0
  let bytes = 0
  while (taken < queue.length) {
    const next = queue[taken]
    const fits = records + next.messages.length <= limits.maxRecords && bytes + next.bytes <= limits.maxBytes
    if (taken > 0 && !fits) break
    taken++
    records += next.messages.length
    bytes += next.bytes
  }
  return queue.splice(0, taken)
}

/** The group's records as one produce request: per topic, in append order. */
export function topicMessagesOf(group: PendingAppend[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>()
  for (const append of group) {
    const list = byTopic.get(append.topic)
    if (list === undefined) byTopic.set(append.topic, [...append.messages])
    else for (const m of append.messages) list.push(m)
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }))
}

export const recordCount = (group: PendingAppend[]): number => group.reduce((n, a) => n + a.messages.length, 0)
