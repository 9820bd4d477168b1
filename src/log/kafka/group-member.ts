/**
 * Membership of a Kafka consumer group, as the log interface describes it: a rebalance is
 * revoke-all then assign (kafkajs has no finer callback), offsets live beside the listener's state
 * (autoCommit off; each assigned partition is sought to the offset `assigned` returns), and the
 * records of a partition go to the listener in order, one call at a time, awaited (backpressure).
 *
 * kafkajs rejoins after stopping its fetchers, and every batch handler has returned by then. This
 * member stops delivering the moment kafkajs reports the rebalance, starts the revoke right away (so
 * state is snapshotted while the group re-forms), and runs one transition at a time: revoke the old
 * partitions, await `revoked`, then pause the new ones until `assigned` says where they resume.
 * A partition is delivered only while it is "live" — between the end of its assign and the start
 * of its revoke — so no record of a partition reaches the listener after its revoke.
 */
import { AssignerProtocol, type Admin, type Consumer, type EachBatchPayload, type Kafka, type PartitionAssigner } from 'kafkajs'
import { LogError } from '../errors.js'
import type { GroupListener, GroupMember, MemberInfo, Membership } from '../types.js'
import { settleBy } from './deadline.js'
import { decodeMemberData, encodeMemberData } from './member-data.js'
import { type PartitionReader, toLogRecord } from './partition-reader.js'
import { assignSticky } from './sticky-assignment.js'

export interface JoinOptions {
  kafka: Kafka
  admin: Admin
  reader: PartitionReader
  topic: string
  /** of the topic: how many partitions may be delivered at once */
  partitions: number
  group: string
  member: MemberInfo
  listener: GroupListener
  sessionTimeoutMs: number
  onError?(err: unknown, where: string): void
}

const PROTOCOL = 'goalpost-sticky'

export async function joinGroup(o: JoinOptions): Promise<Membership> {
  const member = new KafkaGroupMember(o)
  await member.start()
  return member
}

class KafkaGroupMember implements Membership {
  readonly #o: JoinOptions
  readonly #consumer: Consumer
  readonly #heartbeatMs: number
  /** partitions handed to the listener by `assigned` and not yet revoked */
  #owned: number[] = []
  /** the latest assignment, told to the leader at the next join so partitions can stay put */
  #lastAssigned: number[] = []
  readonly #live = new Set<number>()
  readonly #inFlight = new Map<number, Promise<void>>()
  #transitions: Promise<void> = Promise.resolve()
  #generation = 0
  #memberId = ''
  #left: Promise<void> | undefined
  #firstAssignment!: () => void
  readonly #assignedOnce = new Promise<void>((resolve) => (this.#firstAssignment = resolve))

  constructor(o: JoinOptions) {
    this.#o = o
    this.#heartbeatMs = Math.max(100, Math.min(3000, Math.floor(o.sessionTimeoutMs / 3)))
    this.#consumer = o.kafka.consumer({
      groupId: o.group,
      sessionTimeout: o.sessionTimeoutMs,
      rebalanceTimeout: Math.max(o.sessionTimeoutMs, 30_000),
      heartbeatInterval: this.#heartbeatMs,
      partitionAssigners: [this.#assigner],
      maxWaitTimeInMs: 250,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 10 },
    })
  }

  async start(): Promise<void> {
    const { GROUP_JOIN, REBALANCING, CRASH } = this.#consumer.events
    this.#consumer.on(GROUP_JOIN, ({ payload }) => this.#onJoin(payload.memberId, payload.memberAssignment[this.#o.topic] ?? []))
    this.#consumer.on(REBALANCING, () => this.#stopAndRevoke())
    this.#consumer.on(CRASH, ({ payload }) => {
      this.#o.onError?.(payload.error, `group ${this.#o.group}`)
      if (!payload.restart) this.#failAll(payload.error)
      else this.#stopAndRevoke()
    })
    const at = Date.now() + Math.max(30_000, 3 * this.#o.sessionTimeoutMs)
    const started = (async () => {
      await this.#consumer.connect()
      await this.#consumer.subscribe({ topics: [this.#o.topic], fromBeginning: true })
      await this.#consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: Math.max(1, this.#o.partitions),
        eachBatch: (payload) => this.#deliver(payload),
      })
      await this.#assignedOnce
    })()
    const done = await settleBy(started, at)
    if (!done.ok) {
      await this.#consumer.disconnect().catch(() => undefined)
      const why = done.timedOut ? 'timed out' : (done.error as Error).message
      throw new LogError('LOG_UNAVAILABLE', `joining group ${this.#o.group}: ${why}`, { cause: done.error })
    }
  }

  get #assigner(): PartitionAssigner {
    return ({ cluster }) => ({
      name: PROTOCOL,
      version: 1,
      protocol: ({ topics }) => ({
        name: PROTOCOL,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: 1,
          topics,
          userData: encodeMemberData({ url: this.#o.member.url, owned: this.#lastAssigned }),
        }),
      }),
      assign: async ({ members, topics }) => {
        const byMember = new Map<string, Record<string, number[]>>(members.map((m) => [m.memberId, {}]))
        const candidates = members.map((m) => ({
          id: m.memberId,
          owned: decodeMemberData(AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData).owned,
        }))
        for (const topic of topics) {
          const partitions = cluster.findTopicPartitionMetadata(topic).length
          for (const [id, list] of assignSticky(candidates, partitions)) byMember.get(id)![topic] = list
        }
        return members.map((m) => ({
          memberId: m.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: byMember.get(m.memberId)!, userData: Buffer.alloc(0) }),
        }))
      },
    })
  }

  #onJoin(memberId: string, partitions: number[]): void {
    const generation = ++this.#generation
    this.#memberId = memberId
    this.#lastAssigned = [...partitions].sort((a, b) => a - b)
    const { topic, listener } = this.#o
    // nothing of the new assignment is fetched until the listener says where each partition resumes
    if (partitions.length > 0) this.#consumer.pause([{ topic, partitions }])
    this.#transition(async () => {
      await this.#revokeAll()
      if (generation !== this.#generation || this.#left) return
      const next = this.#lastAssigned
      this.#owned = next
      const from = next.length > 0 ? await listener.assigned(next) : new Map<number, number>()
      if (generation !== this.#generation || this.#left) return // a newer transition revokes them
      for (const p of next) {
        const offset = from.get(p) ?? (await this.#o.reader.offset(topic, p, true))
        this.#consumer.seek({ topic, partition: p, offset: String(offset) })
        this.#live.add(p)
      }
      if (next.length > 0) this.#consumer.resume([{ topic, partitions: next }])
      this.#firstAssignment()
    })
  }

  #stopAndRevoke(): void {
    this.#live.clear()
    this.#transition(() => this.#revokeAll())
  }

  #transition(step: () => Promise<void>): void {
    this.#transitions = this.#transitions.then(step).catch((err) => {
      this.#o.onError?.(err, `group ${this.#o.group}: rebalance`)
      for (const p of this.#owned) this.#o.listener.failed?.(p, err)
    })
  }

  async #revokeAll(): Promise<void> {
    const owned = this.#owned
    for (const p of owned) this.#live.delete(p)
    if (owned.length === 0) return
    await Promise.all(owned.map((p) => this.#inFlight.get(p) ?? Promise.resolve()))
    this.#owned = []
    await this.#o.listener.revoked(owned)
  }

  #failAll(err: unknown): void {
    const owned = this.#owned
    this.#live.clear()
    for (const p of owned) this.#o.listener.failed?.(p, err)
    this.#transition(() => this.#revokeAll())
  }

  async #deliver({ batch, heartbeat, isStale }: EachBatchPayload): Promise<void> {
    const p = batch.partition
    if (!this.#live.has(p) || isStale() || batch.messages.length === 0) return
    // without the records of aborted transactions: kafkajs' own rule is corrected (kafkajs-internals.ts)
    const records = batch.messages.map((m) => toLogRecord(m as Parameters<typeof toLogRecord>[0], p))
    // a slow listener must not cost the membership: kafkajs heartbeats only between batches
    const beat = setInterval(() => void heartbeat().catch(() => undefined), this.#heartbeatMs)
    const running = this.#o.listener.records(p, records)
    const settled = running.then(() => undefined, () => undefined)
    this.#inFlight.set(p, settled)
    try {
      await running
    } catch (err) {
      this.#live.delete(p)
      this.#consumer.pause([{ topic: this.#o.topic, partitions: [p] }])
      this.#o.listener.failed?.(p, err)
    } finally {
      clearInterval(beat)
      if (this.#inFlight.get(p) === settled) this.#inFlight.delete(p)
    }
  }

  async members(): Promise<GroupMember[]> {
    const { groups } = await this.#o.admin.describeGroups([this.#o.group])
    const members = groups[0]?.members ?? []
    return members.map((m) => {
      const metadata = m.memberMetadata.length > 0 ? AssignerProtocol.MemberMetadata.decode(m.memberMetadata) : null
      const assignment = m.memberAssignment.length > 0 ? AssignerProtocol.MemberAssignment.decode(m.memberAssignment) : null
      return {
        url: decodeMemberData(metadata?.userData).url,
        partitions: [...(assignment?.assignment[this.#o.topic] ?? [])].sort((a, b) => a - b),
        self: m.memberId === this.#memberId,
      }
    })
  }

  owned(): number[] {
    return [...this.#owned]
  }

  leave(): Promise<void> {
    this.#left ??= (async () => {
      this.#live.clear()
      this.#transition(() => this.#revokeAll())
      await this.#transitions
      await this.#consumer.disconnect()
    })()
    return this.#left
  }
}
