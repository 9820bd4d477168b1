/**
 * Membership of a Kafka consumer group, as the log interface describes it: offsets live beside the
 * listener's state (autoCommit off; each assigned partition is sought to the offset the listener
 * answers), and the records of a partition go to the listener in order, one call at a time,
 * awaited (backpressure).
 *
 * kafkajs speaks the eager protocol — every member rejoins at a rebalance — and has no revoke
 * callback; this member makes it incremental, as Kafka's cooperative protocol does. It stops
 * delivering the moment kafkajs reports the rebalance, and when the new assignment comes it revokes
 * only the partitions that leave, keeps the others (their listener state stays as it is and they
 * resume where it stands), and assigns the new ones. A member that was expelled meanwhile (its
 * session timed out: it rejoins under a new member id) keeps nothing: another member may have
 * owned its partitions in between. Transitions run one at a time; a partition is delivered only
 * while it is "live" — between the end of its assign (or keep) and the start of its revoke — so no
 * record of a partition reaches the listener after its revoke.
 *
 * kafkajs' consumer only keeps the membership: every partition stays paused in it, so it never
 * fetches a record. Each live partition is read by a delivery of its own (delivery.ts), with
 * Goalpost's decoder: a batch that cannot be read concerns its own partition only. A consumer that
 * crashes for good (kafkajs does not restart it) is replaced by a new one after a pause that grows
 * with each crash; its partitions are reported failed and revoked meanwhile.
 *
 * The group confirms a member with each join and each heartbeat answered. A member unconfirmed for
 * longer than its session timeout allows (a process paused past it) says so through `current()`,
 * and claims no partitions at its next join, so that it cannot take back a partition another
 * member owned meanwhile.
 */
import { AssignerProtocol, type Admin, type Consumer, type Kafka, type PartitionAssigner } from 'kafkajs'
import { LogError, type UnreadableBatch } from '../errors.js'
import type { GroupListener, GroupMember, MemberInfo, Membership } from '../types.js'
import { settleBy } from './deadline.js'
import { decodeMemberData, encodeMemberData } from './member-data.js'
import { PartitionDelivery } from './delivery.js'
import type { PartitionReader } from './partition-reader.js'
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
/** a member restarting partitions waits for this many heartbeats answered after it asked */
const CONFIRMING_HEARTBEATS = 2
/** a consumer that crashed for good is replaced after 1, 2, 4 … s, at most this long */
const MAX_RECREATE_MS = 30_000
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export async function joinGroup(o: JoinOptions): Promise<Membership> {
  const member = new KafkaGroupMember(o)
  await member.start()
  return member
}

class KafkaGroupMember implements Membership {
  readonly #o: JoinOptions
  #consumer: Consumer
  readonly #heartbeatMs: number
  /** partitions handed to the listener by `assigned` (or kept) and not yet revoked */
  #owned: number[] = []
  /** the latest assignment, told to the leader at the next join so partitions can stay put */
  #lastAssigned: number[] = []
  /** the partitions being delivered: between the end of their assign (or keep) and the start of their revoke */
  readonly #deliveries = new Map<number, PartitionDelivery>()
  /** crashes in a row that ended a consumer for good */
  #crashes = 0
  #transitions: Promise<void> = Promise.resolve()
  /** joins seen by this member: a transition of an older one gives way */
  #generation = 0
  #memberId = ''
  /** when the group last confirmed this member (a join, a heartbeat answered), and how many heartbeats were */
  #confirmedAt = 0
  #heartbeats = 0
  readonly #restarting = new Set<number>()
  #left: Promise<void> | undefined
  #firstAssignment!: () => void
  #firstFailure!: (err: unknown) => void
  readonly #assignedOnce = new Promise<void>((resolve, reject) => {
    this.#firstAssignment = resolve
    this.#firstFailure = reject
  })

  constructor(o: JoinOptions) {
    this.#o = o
    this.#heartbeatMs = Math.max(100, Math.min(3000, Math.floor(o.sessionTimeoutMs / 3)))
    this.#consumer = this.#newConsumer()
  }

  #newConsumer(): Consumer {
    const o = this.#o
    return o.kafka.consumer({
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

  /** Connects the consumer and starts its loop; its events drive this member. */
  async #run(consumer: Consumer): Promise<void> {
    const { GROUP_JOIN, REBALANCING, CRASH, HEARTBEAT } = consumer.events
    const mine = (): boolean => consumer === this.#consumer
    consumer.on(GROUP_JOIN, ({ payload }) => {
      if (!mine()) return
      this.#crashes = 0
      this.#onJoin(payload.memberId, payload.memberAssignment[this.#o.topic] ?? [])
    })
    consumer.on(HEARTBEAT, () => {
      if (!mine()) return
      this.#confirmedAt = Date.now()
      this.#heartbeats++
    })
    consumer.on(REBALANCING, () => {
      if (!mine()) return
      void this.#haltAll()
      this.#o.listener.rebalancing?.()
    })
    consumer.on(CRASH, ({ payload }) => {
      if (!mine()) return
      this.#o.onError?.(payload.error, `group ${this.#o.group}: the consumer crashed${payload.restart ? '; kafkajs restarts it' : '; it is replaced'}`)
      if (payload.restart) this.#stopAndRevoke()
      else this.#replace(payload.error)
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [this.#o.topic], fromBeginning: true })
    // every partition stays paused (onJoin): the handler is never called, deliveries read the records
    await consumer.run({ autoCommit: false, eachBatch: async () => undefined })
  }

  async start(): Promise<void> {
    const at = Date.now() + Math.max(30_000, 3 * this.#o.sessionTimeoutMs)
    const started = (async () => {
      await this.#run(this.#consumer)
      await this.#assignedOnce
    })()
    const done = await settleBy(started, at)
    if (!done.ok) {
      await this.#consumer.disconnect().catch(() => undefined)
      await this.#haltAll(true)
      // the listener's own failure (a restore that cannot read the changelog) is told as it is
      if (!done.timedOut && this.#listenerFailure !== undefined && done.error === this.#listenerFailure) throw done.error
      const why = done.timedOut ? 'timed out' : (done.error as Error).message
      throw new LogError('LOG_UNAVAILABLE', `joining group ${this.#o.group}: ${why}`, { cause: done.error })
    }
  }

  #listenerFailure: unknown = undefined

  /**
   * The consumer crashed and kafkajs will not restart it: its partitions are failed and revoked,
   * and a new consumer joins after a pause (the group then assigns partitions afresh).
   */
  #replace(err: unknown): void {
    const old = this.#consumer
    this.#failAll(err)
    const pause = Math.min(MAX_RECREATE_MS, 1000 * 2 ** this.#crashes++)
    void (async () => {
      await old.disconnect().catch(() => undefined)
      await sleep(pause)
      if (this.#left) return
      const next = this.#newConsumer()
      this.#consumer = next
      try {
        await this.#run(next)
      } catch (e) {
        this.#o.onError?.(e, `group ${this.#o.group}: starting a new consumer`)
        if (this.#consumer === next && !this.#left) this.#replace(e)
      }
    })()
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
          // a member the group may have expelled meanwhile claims nothing
          userData: encodeMemberData({ url: this.#o.member.url, owned: this.#sinceConfirmed() < this.#o.sessionTimeoutMs ? this.#lastAssigned : [] }),
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
    // the same member id: this member was in the group all along, and what it owned stayed its own
    const continued = memberId === this.#memberId
    this.#memberId = memberId
    this.#confirmedAt = Date.now()
    this.#lastAssigned = [...partitions].sort((a, b) => a - b)
    const { topic, listener } = this.#o
    const next = this.#lastAssigned
    // nothing is delivered until the listener says where each partition resumes (an expelled
    // member learns of its new assignment here, with no rebalancing event before it); kafkajs'
    // consumer fetches none of them, ever
    void this.#haltAll()
    if (next.length > 0) this.#consumer.pause([{ topic, partitions: next }])
    listener.joined?.(next)
    const stale = (): boolean => generation !== this.#generation || this.#left !== undefined
    this.#transition(async () => {
      const kept = continued && listener.kept ? this.#owned.filter((p) => next.includes(p)) : []
      await this.#revoke(this.#owned.filter((p) => !kept.includes(p)))
      if (stale()) return
      if (kept.length > 0) {
        await Promise.all(kept.map(async (p) => {
          await this.#deliveries.get(p)?.close()
          this.#deliveries.delete(p)
        }))
        const from = await listener.kept!(kept)
        if (stale()) return // a newer transition revokes or keeps them
        await this.#resume(kept, from)
      }
      const fresh = next.filter((p) => !kept.includes(p))
      this.#owned = next
      if (fresh.length > 0) {
        const from = await listener.assigned(fresh)
        if (stale()) return
        await this.#resume(fresh, from)
      }
      this.#firstAssignment()
    })
  }

  /** Delivers each partition from where the listener resumes it. */
  async #resume(partitions: number[], from: Map<number, number>): Promise<void> {
    const { topic, listener, kafka } = this.#o
    for (const p of partitions) {
      const offset = from.get(p) ?? (await this.#o.reader.offset(topic, p, true))
      await this.#deliveries.get(p)?.close()
      const delivery: PartitionDelivery = new PartitionDelivery({
        kafka,
        topic,
        partition: p,
        from: offset,
        deliver: (records) => listener.records(p, records),
        // without an answer from the listener nothing is skipped
        unreadable: (err: UnreadableBatch) => listener.unreadable?.(p, err) ?? Promise.resolve(false),
        failed: (err) => {
          if (this.#deliveries.get(p) === delivery) this.#deliveries.delete(p)
          listener.failed?.(p, err)
        },
        onError: this.#o.onError,
      })
      this.#deliveries.set(p, delivery)
    }
  }

  /**
   * Stops every delivery at once. A halted delivery stays listed until a revoke, resume or keep of
   * its partition closes it, which waits for its handler call to end; `wait`: closes them all now.
   */
  async #haltAll(wait = false): Promise<void> {
    for (const d of this.#deliveries.values()) d.halt()
    if (!wait) return
    const closing = [...this.#deliveries.values()]
    this.#deliveries.clear()
    await Promise.all(closing.map((d) => d.close()))
  }

  #stopAndRevoke(): void {
    void this.#haltAll()
    this.#transition(() => this.#revoke(this.#owned))
  }

  #transition(step: () => Promise<void>): void {
    this.#transitions = this.#transitions.then(step).catch((err) => {
      this.#o.onError?.(err, `group ${this.#o.group}: rebalance`)
      this.#listenerFailure = err
      this.#firstFailure(err)
      for (const p of this.#owned) this.#o.listener.failed?.(p, err)
    })
  }

  async #revoke(partitions: number[]): Promise<void> {
    const halting = partitions.map((p) => this.#deliveries.get(p)).filter((d) => d !== undefined)
    for (const p of partitions) this.#deliveries.delete(p)
    if (partitions.length === 0) return
    await Promise.all(halting.map((d) => d.close()))
    this.#owned = this.#owned.filter((p) => !partitions.includes(p))
    await this.#o.listener.revoked(partitions)
  }

  #sinceConfirmed(): number {
    return Date.now() - this.#confirmedAt
  }

  /**
   * Confirmed recently enough that no other member can own this one's partitions yet: the group
   * expels a member after its session timeout from the last heartbeat it received, and a new
   * owner restores before it answers. A heartbeat interval is left for the answer's way back.
   */
  current(): boolean {
    return this.#sinceConfirmed() < this.#o.sessionTimeoutMs - this.#heartbeatMs
  }

  restart(partitions: number[]): void {
    const asked = partitions.filter((p) => !this.#restarting.has(p))
    if (asked.length === 0 || this.#left) return
    for (const p of asked) {
      this.#restarting.add(p)
      this.#deliveries.get(p)?.halt()
    }
    const { topic, listener } = this.#o
    this.#consumer.pause([{ topic, partitions: asked }])
    const generation = this.#generation
    const beats = this.#heartbeats
    const stale = (): boolean => generation !== this.#generation || this.#left !== undefined
    this.#transition(async () => {
      try {
        // heartbeats answered after this call (the second was sent after it) confirm that the group
        // still counts this member in the same generation; an expelled member rejoins instead
        while (this.#heartbeats < beats + CONFIRMING_HEARTBEATS && !stale()) await sleep(100)
        if (stale()) return
        const mine = asked.filter((p) => this.#owned.includes(p))
        if (mine.length === 0) return
        await this.#revoke(mine)
        this.#owned = [...this.#owned, ...mine].sort((a, b) => a - b)
        const from = await listener.assigned(mine)
        if (stale()) return
        await this.#resume(mine, from)
      } finally {
        for (const p of asked) this.#restarting.delete(p)
      }
    })
  }

  #failAll(err: unknown): void {
    const owned = this.#owned
    void this.#haltAll()
    for (const p of owned) this.#o.listener.failed?.(p, err)
    this.#transition(() => this.#revoke(this.#owned))
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
      void this.#haltAll()
      this.#transition(() => this.#revoke(this.#owned))
      await this.#transitions
      await this.#consumer.disconnect()
    })()
    return this.#left
  }
}
