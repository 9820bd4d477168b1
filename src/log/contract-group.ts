/**
 * The group-membership part of the log contract, and the recording listener that both this suite
 * and implementation-specific group tests use.
 */
import type { Test } from 'tap'
import type { EventLog, GroupListener, LogRecord, ProducerRecord } from './types.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** Everything a group member's listener was told, in order, with checks of the interface's promises. */
export interface RecordingListener extends GroupListener {
  readonly events: Array<{ kind: 'assigned' | 'revoked' | 'kept'; partitions: number[] }>
  /** delivered records per partition */
  readonly got: Map<number, LogRecord[]>
  /** breaches of the interface seen: a record of a partition not owned, overlapping calls */
  readonly breaches: string[]
  owned(): number[]
  count(): number
}

/**
 * `resumeAt` answers `assigned` for each partition; missing ones start at the beginning. With
 * `keeps`, the listener keeps the partitions that stay through a rebalance (`kept`, resuming each
 * after the last record it got); without, they are revoked and assigned again.
 */
export function recordingListener(resumeAt: (partition: number) => number | undefined = () => undefined, keeps = false): RecordingListener {
  const events: RecordingListener['events'] = []
  const got = new Map<number, LogRecord[]>()
  const breaches: string[] = []
  const owned = new Set<number>()
  const running = new Set<number>()
  return {
    events,
    got,
    breaches,
    owned: () => [...owned].sort((a, b) => a - b),
    count: () => [...got.values()].reduce((n, list) => n + list.length, 0),
    async assigned(partitions) {
      events.push({ kind: 'assigned', partitions: [...partitions].sort((a, b) => a - b) })
      for (const p of partitions) owned.add(p)
      const from = new Map<number, number>()
      for (const p of partitions) {
        const at = resumeAt(p)
        if (at !== undefined) from.set(p, at)
      }
      return from
    },
    ...(keeps && {
      async kept(partitions: number[]) {
        events.push({ kind: 'kept', partitions: [...partitions].sort((a, b) => a - b) })
        const from = new Map<number, number>()
        for (const p of partitions) {
          if (!owned.has(p)) breaches.push(`kept ${p}, which is not owned`)
          const last = got.get(p)?.at(-1)
          if (last) from.set(p, last.offset + 1)
          else if (resumeAt(p) !== undefined) from.set(p, resumeAt(p)!)
        }
        return from
      },
    }),
    async revoked(partitions) {
      events.push({ kind: 'revoked', partitions: [...partitions].sort((a, b) => a - b) })
      for (const p of partitions) {
        if (running.has(p)) breaches.push(`revoked ${p} while its records call ran`)
        owned.delete(p)
      }
    },
    async records(partition, records) {
      if (!owned.has(partition)) breaches.push(`records of ${partition}, which is not owned`)
      if (running.has(partition)) breaches.push(`overlapping records calls for ${partition}`)
      running.add(partition)
      await sleep(1)
      got.set(partition, [...(got.get(partition) ?? []), ...records])
      running.delete(partition)
    },
    failed(partition, err) {
      breaches.push(`partition ${partition} failed: ${String(err)}`)
    },
  }
}

let groupSeq = 0
const freshName = (what: string): string => `contract-${what}-${process.pid}-${Date.now().toString(36)}-${groupSeq++}`

const rec = (key: string, value: string): ProducerRecord => ({ key, value: Buffer.from(value), timestamp: Date.now() })

/** every record of a partition, read in chunks from the last offset + 1 (offsets need not be dense) */
export async function readAll(log: EventLog, topic: string, partition: number): Promise<LogRecord[]> {
  const end = await log.endOffset(topic, partition)
  const all: LogRecord[] = []
  let from = await log.beginOffset(topic, partition)
  while (from < end) {
    const chunk = await log.read(topic, partition, from, 1000)
    if (chunk.length === 0) break
    all.push(...chunk)
    from = chunk[chunk.length - 1].offset + 1
  }
  return all
}

const offsetsOf = async (log: EventLog, topic: string, partition: number): Promise<number[]> =>
  (await readAll(log, topic, partition)).map((r) => r.offset)

type Use = (name: string, fn: (t: Test, h: { log: EventLog }) => Promise<void>) => void

export function groupContract(use: Use): void {
  use('group of one: assigned gets every partition, records flow from the returned offsets, leave revokes', async (t, { log }) => {
    const topic = freshName('group')
    await log.createTopic({ name: topic, partitions: 3 })
    await log.append(topic, Array.from({ length: 60 }, (_, i) => rec(`key${i}`, `before${i}`)))
    const before = [await offsetsOf(log, topic, 0), await offsetsOf(log, topic, 1), await offsetsOf(log, topic, 2)]
    t.ok(before.every((list) => list.length >= 3), 'every partition holds a few records')
    // partition 0 resumes from its third record, 1 from its end, 2 is left to start at the beginning
    const resume = new Map([[0, before[0][2]], [1, await log.endOffset(topic, 1)]])
    const listener = recordingListener((p) => resume.get(p))
    const membership = await log.join(topic, freshName('g'), { url: 'http://127.0.0.1:1' }, listener)
    t.same(listener.events, [{ kind: 'assigned', partitions: [0, 1, 2] }], 'assigned once, with every partition')
    t.same(membership.owned(), [0, 1, 2])

    await log.append(topic, Array.from({ length: 30 }, (_, i) => rec(`key${i}`, `after${i}`)))
    const expected = [
      (await offsetsOf(log, topic, 0)).filter((o) => o >= before[0][2]),
      (await offsetsOf(log, topic, 1)).filter((o) => o > before[1][before[1].length - 1]),
      await offsetsOf(log, topic, 2),
    ]
    const total = expected.reduce((n, list) => n + list.length, 0)
    await waitFor('every expected record', () => listener.count() >= total)
    for (let p = 0; p < 3; p++) {
      t.same((listener.got.get(p) ?? []).map((r) => r.offset), expected[p], `partition ${p}: from its resume offset, in order, once`)
    }
    const members = await membership.members()
    t.same(members, [{ url: 'http://127.0.0.1:1', partitions: [0, 1, 2], self: true }], 'members() shows this member and its partitions')

    await membership.leave()
    t.same(listener.events.at(-1), { kind: 'revoked', partitions: [0, 1, 2] }, 'leave revokes every partition')
    t.same(membership.owned(), [])
    const delivered = listener.count()
    await log.append(topic, [rec('key1', 'after leave')])
    await sleep(300)
    t.equal(listener.count(), delivered, 'nothing delivered after leave')
    t.same(listener.breaches, [], 'no record outside ownership, no overlapping calls')
  })

  use('group of one: a partition whose listener fails is reported and stops, the others go on', async (t, { log }) => {
    const topic = freshName('group-fail')
    await log.createTopic({ name: topic, partitions: 2 })
    const failed: number[] = []
    const got = new Map<number, number>()
    let revoked: number[] = []
    const membership = await log.join(topic, freshName('g'), { url: 'http://127.0.0.1:2' }, {
      assigned: async () => new Map(),
      revoked: async (ps) => void (revoked = ps),
      records: async (p, records) => {
        if (p === 0) throw new Error('cannot fold')
        got.set(p, (got.get(p) ?? 0) + records.length)
      },
      failed: (p) => void failed.push(p),
    })
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`)
    await log.append(topic, keys.map((k) => rec(k, 'v')))
    const onOne = keys.filter((k) => log.partitionFor(topic, k) === 1).length
    await waitFor('the failure and the other partition', () => failed.length > 0 && (got.get(1) ?? 0) >= onOne)
    t.same(failed, [0], 'the failing partition is reported once')
    t.equal(got.get(1), onOne, 'the other partition got all its records')
    await membership.leave()
    t.same([...revoked].sort(), [0, 1], 'leave still revokes both')
  })
}
