/**
 * The one suite every EventLog (and ConfigLog) implementation must pass. An implementation's
 * test file calls `logContract(t, factory)`; optional capabilities of the factory switch on the
 * tests that need them, and a missing one skips them with the reason.
 *
 * @example
 * logContract(t, async () => {
 *   const dir = await mkdtemp(join(tmpdir(), 'log-'))
 *   const log = await EmbeddedLog.open({ dir })
 *   return { log, cleanup: () => log.close() }
 * })
 */
import type { Test } from 'tap'
import { groupContract, readAll, waitFor } from './contract-group.js'
import type { ConfigLog, ConfigRecord, EventLog, LogRecord, ProducerRecord } from './types.js'

export interface LogUnderTest {
  log: EventLog
  config?: ConfigLog
  /** closes everything and removes what the factory created */
  cleanup(): Promise<void>
  /** closes log and config and opens them again on the same storage (replaces `log`, `config`) */
  reopen?(): Promise<void>
  /** while set, durable writes fail */
  failWrites?(fail: boolean): void
  /** runs the implementation's time-based retention as of `now` */
  enforceRetention?(now: number): Promise<number>
  /**
   * set when offsets are dense (each record takes the next one); the contract itself only asks
   * that they increase (Kafka's commit markers take offsets too)
   */
  denseOffsets?: true
}

export type LogFactory = () => Promise<LogUnderTest>

/**
 * A LogUnderTest over `open`: cleanup closes config and log (then `removeStorage`), reopen closes
 * them and opens them again.
 */
export async function reopenable(
  open: () => Promise<{ log: EventLog; config: ConfigLog }>,
  removeStorage?: () => Promise<void>,
): Promise<LogUnderTest> {
  let current = await open()
  const close = async (): Promise<void> => {
    await current.config.close()
    await current.log.close()
  }
  const under: LogUnderTest = {
    ...current,
    async cleanup() {
      await close()
      await removeStorage?.()
    },
    async reopen() {
      await close()
      current = await open()
      Object.assign(under, current)
    },
  }
  return under
}

let topicSeq = 0
/** a fresh topic name per test, so implementations with a shared broker need no cleanup */
function freshTopic(): string {
  return `contract-${process.pid}-${Date.now().toString(36)}-${topicSeq++}`
}

function rec(key: string, value: string, timestamp = Date.now()): ProducerRecord {
  return { key, value: Buffer.from(value), timestamp }
}

const text = (records: LogRecord[]): string[] => records.map((r) => r.value.toString())
const offsets = (records: LogRecord[]): number[] => records.map((r) => r.offset)
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i)
/**
 * Timestamps of records whose exact value a test checks: recent ones, an hour back, because a
 * Kafka broker deletes records older than its retention (7 days by default) at its next check,
 * and a record stamped in 1970 could vanish between the append and the read.
 */
const T0 = Date.now() - 3_600_000
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const increasing = (list: number[]): boolean => list.every((o, i) => Number.isInteger(o) && o >= 0 && (i === 0 || o > list[i - 1]))

/** Subscribes and collects every delivered record; `calls` counts handler calls. */
function collect(log: EventLog, topic: string, partition: number, from: number) {
  const got: LogRecord[] = []
  const calls: number[] = []
  let running = 0
  let maxRunning = 0
  const sub = log.subscribe(topic, partition, from, async (records) => {
    maxRunning = Math.max(maxRunning, ++running)
    calls.push(records.length)
    await sleep(1)
    got.push(...records)
    running--
  })
  return { got, calls, sub, maxRunning: () => maxRunning }
}

export function logContract(t: Test, make: LogFactory): void {
  const use = (name: string, fn: (t: Test, h: LogUnderTest) => Promise<void>): void => {
    void t.test(name, async (t) => {
      const h = await make()
      try {
        await fn(t, h)
      } finally {
        await h.cleanup()
      }
    })
  }
  const needs = (cap: keyof LogUnderTest, name: string, fn: (t: Test, h: LogUnderTest) => Promise<void>): void => {
    use(name, async (t, h) => {
      // a plan of 0 reports the subtest as skipped, with the reason
      if (h[cap] === undefined) t.plan(0, `the factory has no ${cap}`)
      else await fn(t, h)
    })
  }

  use('offsets increase from 0 and endOffset passes every record', async (t, h) => {
    const { log } = h
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    await log.createTopic({ name: topic, partitions: 1 }) // idempotent
    t.equal(log.partitionsOf(topic), 1)
    t.equal(await log.endOffset(topic, 0), 0, 'empty partition ends at 0')
    await log.append(topic, [rec('a', 'v0', T0), rec('b', 'v1', T0 + 1)])
    const afterFirst = await log.endOffset(topic, 0)
    t.ok(afterFirst >= 2, `endOffset ${afterFirst} passes the first two records`)
    await log.append(topic, [rec('c', 'v2', T0 + 2)])
    await log.append(topic, range(3, 8).map((i) => rec(`k${i}`, `v${i}`, T0 + i)))
    t.equal(await log.beginOffset(topic, 0), 0)
    const end = await log.endOffset(topic, 0)
    const all = await log.read(topic, 0, 0, 100)
    t.same(text(all), range(0, 8).map((i) => `v${i}`))
    t.ok(increasing(offsets(all)), `offsets increase: ${offsets(all)}`)
    t.equal(all[0].offset, 0, 'the first record is at offset 0')
    t.ok(all[2].offset >= afterFirst, 'a later append lands at or past the earlier endOffset')
    t.ok(end > all[7].offset, `endOffset ${end} is past the last record`)
    t.same(await log.read(topic, 0, all[7].offset + 1, 10), [], 'nothing after the last record')
    t.match(all[1], { key: 'b', timestamp: T0 + 1, partition: 0, offset: all[1].offset })
    if (h.denseOffsets) {
      t.same(offsets(all), range(0, 8), 'dense')
      t.equal(end, 8)
    }
  })

  use('records of one key keep their order, in the partition partitionFor names', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 4 })
    const keys = range(0, 20).map((k) => `site:${k}`)
    const appends: Promise<void>[] = []
    for (let i = 0; i < 25; i++) for (const key of keys) appends.push(log.append(topic, [rec(key, `${key}#${i}`)]))
    await Promise.all(appends)
    const seen = new Map<string, string[]>()
    const misplaced: string[] = []
    for (let p = 0; p < 4; p++) {
      for (const record of await readAll(log, topic, p)) {
        if (record.partition !== p || log.partitionFor(topic, record.key) !== p) misplaced.push(`${record.key}@${p}`)
        seen.set(record.key, [...(seen.get(record.key) ?? []), record.value.toString()])
      }
    }
    t.same(misplaced, [], 'every record sits in the partition of its key')
    for (const key of keys) t.same(seen.get(key), range(0, 25).map((i) => `${key}#${i}`), key)
  })

  use('partitionFor is stable, in range, and spreads keys', async (t, h) => {
    const topic = freshTopic()
    await h.log.createTopic({ name: topic, partitions: 8 })
    const keys = range(0, 2000).map((i) => `s${i % 7}:${i * 7919}`)
    const first = keys.map((key) => h.log.partitionFor(topic, key))
    t.ok(first.every((p) => Number.isInteger(p) && p >= 0 && p < 8), 'every partition is in [0, 8)')
    t.same(keys.map((key) => h.log.partitionFor(topic, key)), first, 'same answer twice')
    t.equal(new Set(first).size, 8, 'every partition gets keys')
    if (h.reopen) {
      await h.reopen()
      t.same(keys.map((key) => h.log.partitionFor(topic, key)), first, 'same answer after a restart')
    }
  })

  use('read returns exactly the requested range', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 2 })
    const key = 'only-key'
    const p = log.partitionFor(topic, key)
    await log.append(topic, range(0, 25).map((i) => rec(key, `v${i}`)))
    await log.append(topic, range(25, 50).map((i) => rec(key, `v${i}`)))
    const at = offsets(await readAll(log, topic, p))
    t.equal(at.length, 50)
    const end = await log.endOffset(topic, p)
    t.same(offsets(await log.read(topic, p, at[10], 5)), at.slice(10, 15))
    t.same(text(await log.read(topic, p, at[10], 5)), range(10, 15).map((i) => `v${i}`))
    t.same(offsets(await log.read(topic, p, at[20], 10)), at.slice(20, 30), 'across appends')
    t.same(offsets(await log.read(topic, p, at[45], 10)), at.slice(45, 50), 'short at the end')
    t.same(await log.read(topic, p, end, 10), [], 'nothing at the end')
    t.same(await log.read(topic, p, end + 1000, 1), [], 'nothing past the end')
    t.same(await log.read(topic, p, 0, 0), [], 'max 0')
    t.same(await log.read(topic, 1 - p, 0, 10), [], 'the other partition is empty')
  })

  use('subscribe catches up from an offset, then tails live appends', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    for (let b = 0; b < 5; b++) await log.append(topic, range(b * 500, b * 500 + 500).map((i) => rec('k', `v${i}`)))
    const from = (await readAll(log, topic, 0))[1000].offset
    const c = collect(log, topic, 0, from)
    await waitFor('catch-up', () => c.got.length >= 1500)
    const live: Promise<void>[] = []
    for (let b = 0; b < 30; b++) {
      live.push(log.append(topic, range(0, 50).map((i) => rec('k', `v${2500 + b * 50 + i}`))))
    }
    await Promise.all(live)
    await waitFor('live records', () => c.got.length >= 3000)
    await c.sub.close()
    t.same(offsets(c.got), offsets(await readAll(log, topic, 0)).slice(1000), 'every record once, in order')
    t.same(text(c.got), range(1000, 4000).map((i) => `v${i}`))
    t.equal(c.maxRunning(), 1, 'one handler call at a time')
    await log.append(topic, [rec('k', 'after close')])
    await sleep(50)
    t.equal(c.got.length, 3000, 'nothing delivered after close')
  })

  use('a busy handler gets the records that piled up in one call', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const calls: LogRecord[][] = []
    const sub = log.subscribe(topic, 0, 0, async (records) => {
      calls.push(records)
      if (calls.length === 1) await gate
    })
    await log.append(topic, [rec('k', 'first')])
    await waitFor('first call', () => calls.length === 1)
    for (let i = 0; i < 99; i++) await log.append(topic, [rec('k', `v${i}`)])
    release()
    await waitFor('backlog', () => calls.flat().length === 100)
    await sub.close()
    t.ok(calls[1].length > 1, `second call carried ${calls[1].length} records`)
    t.same(offsets(calls.flat()), offsets(await readAll(log, topic, 0)))
  })

  use('subscribe from a future offset starts there', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    const c = collect(log, topic, 0, 5)
    await log.append(topic, range(0, 8).map((i) => rec('k', `v${i}`)))
    await waitFor('records from 5', () => c.got.length >= 3)
    await sleep(20)
    await c.sub.close()
    t.same(offsets(c.got), [5, 6, 7])
  })

  use('close() of a subscription waits for the running handler', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    let started = false
    let finished = false
    const sub = log.subscribe(topic, 0, 0, async () => {
      started = true
      await sleep(100)
      finished = true
    })
    await log.append(topic, [rec('k', 'v')])
    await waitFor('handler start', () => started)
    await sub.close()
    t.ok(finished, 'the handler had finished when close() resolved')
  })

  use('a bad record fails the whole append and takes no offset', async (t, { log }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 3 })
    const bad = { key: 'x', value: 'not a buffer', timestamp: Date.now() } as unknown as ProducerRecord
    const batch = [...range(0, 9).map((i) => rec(`k${i}`, `v${i}`)), bad]
    await t.rejects(log.append(topic, batch))
    await t.rejects(log.append(freshTopic(), [rec('k', 'v')]), 'unknown topic')
    for (let p = 0; p < 3; p++) t.equal(await log.endOffset(topic, p), 0, `partition ${p} untouched`)
    await log.append(topic, [rec('k0', 'good')])
    t.same(offsets(await readAll(log, topic, log.partitionFor(topic, 'k0'))), [0])
  })

  needs('failWrites', 'a failed write stores nothing, delivers nothing and leaves no gap', async (t, h) => {
    const { log } = h
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 1 })
    const c = collect(log, topic, 0, 0)
    await log.append(topic, range(0, 3).map((i) => rec('k', `v${i}`)))
    h.failWrites!(true)
    const failed = [log.append(topic, [rec('k', 'lost1'), rec('k', 'lost2')]), log.append(topic, [rec('k', 'lost3')])]
    const outcomes = await Promise.allSettled(failed)
    t.same(outcomes.map((o) => o.status), ['rejected', 'rejected'])
    t.equal(log.healthy(), false, 'unhealthy after a failed write')
    t.equal(await log.endOffset(topic, 0), 3)
    h.failWrites!(false)
    await log.append(topic, [rec('k', 'v3'), rec('k', 'v4')])
    t.equal(log.healthy(), true, 'healthy again after a good write')
    t.same(text(await readAll(log, topic, 0)), range(0, 5).map((i) => `v${i}`), 'offsets 3, 4 reused')
    await waitFor('delivery', () => c.got.length >= 5)
    await sleep(20)
    await c.sub.close()
    t.same(text(c.got), range(0, 5).map((i) => `v${i}`), 'failed records never delivered')
  })

  use('concurrent single-record appends all resolve and are all readable', async (t, { log, denseOffsets }) => {
    const topic = freshTopic()
    await log.createTopic({ name: topic, partitions: 4 })
    const appends = range(0, 1000).map((i) => log.append(topic, [rec(`key${i}`, `v${i}`)]))
    t.ok(log.pending() > 0, `pending() counts waiting records (${log.pending()})`)
    await Promise.all(appends)
    t.equal(log.pending(), 0, 'nothing pending once all resolved')
    const values: string[] = []
    for (let p = 0; p < 4; p++) {
      const records = await readAll(log, topic, p)
      t.ok(increasing(offsets(records)), `partition ${p}: offsets increase`)
      if (denseOffsets) t.same(offsets(records), range(0, records.length), `partition ${p} dense`)
      values.push(...text(records))
    }
    t.same(values.sort(), range(0, 1000).map((i) => `v${i}`).sort())
  })

  needs('reopen', 'close() makes queued appends durable first', async (t, h) => {
    const topic = freshTopic()
    await h.log.createTopic({ name: topic, partitions: 2 })
    const appends = range(0, 200).map((i) => h.log.append(topic, [rec(`k${i}`, `v${i}`)]))
    await h.reopen!()
    await Promise.all(appends)
    const total = (await readAll(h.log, topic, 0)).length + (await readAll(h.log, topic, 1)).length
    t.equal(total, 200)
  })

  needs('reopen', 'a restart keeps topics, offsets and records', async (t, h) => {
    const topic = freshTopic()
    await h.log.createTopic({ name: topic, partitions: 2 })
    await h.log.append(topic, range(0, 10).map((i) => rec(`k${i}`, `v${i}`, T0 + 5000 + i)))
    const ends = [await h.log.endOffset(topic, 0), await h.log.endOffset(topic, 1)]
    const before = [await readAll(h.log, topic, 0), await readAll(h.log, topic, 1)]
    await h.reopen!()
    t.equal(h.log.partitionsOf(topic), 2)
    t.same([await h.log.endOffset(topic, 0), await h.log.endOffset(topic, 1)], ends)
    t.same([await readAll(h.log, topic, 0), await readAll(h.log, topic, 1)], before)
    await h.log.append(topic, range(10, 20).map((i) => rec(`k${i}`, `v${i}`)))
    let total = 0
    for (let p = 0; p < 2; p++) {
      const records = await readAll(h.log, topic, p)
      total += records.length
      t.ok(increasing(offsets(records)), `partition ${p}: offsets increase`)
      t.same(records.slice(0, before[p].length), before[p], `partition ${p} keeps its records`)
      if (h.denseOffsets) t.same(offsets(records), range(0, records.length), `partition ${p} continues densely`)
    }
    t.equal(total, 20)
  })

  needs('enforceRetention', 'retention deletes old records from the head, up to the first newer one', async (t, h) => {
    const topic = freshTopic()
    await h.log.createTopic({ name: topic, partitions: 1, retentionMs: 60_000 })
    const now = Date.now()
    const old = now - 120_000
    const stamps = [old, old, old, now, old, now]
    await h.log.append(topic, stamps.map((ts, i) => rec('k', `v${i}`, ts)))
    t.equal(await h.enforceRetention!(now), 3)
    t.equal(await h.log.beginOffset(topic, 0), 3)
    t.equal(await h.log.endOffset(topic, 0), 6)
    t.same(offsets(await h.log.read(topic, 0, 0, 10)), [3, 4, 5], 'reading from 0 starts at the head')
    t.equal(await h.enforceRetention!(now), 0, 'nothing more to delete')
    await h.log.append(topic, [rec('k', 'v6', now)])
    t.equal(await h.enforceRetention!(now + 3_600_000), 4, 'everything expires later')
    t.equal(await h.log.beginOffset(topic, 0), 7)
    if (h.reopen) {
      await h.reopen()
      t.equal(await h.log.beginOffset(topic, 0), 7, 'begin survives a restart')
      t.equal(await h.log.endOffset(topic, 0), 7, 'an emptied partition keeps its end')
    }
    await h.log.append(topic, [rec('k', 'v7')])
    t.same(offsets(await h.log.read(topic, 0, 0, 10)), [7], 'no offset reused')
    const c = collect(h.log, topic, 0, 0)
    await waitFor('delivery', () => c.got.length >= 1)
    await c.sub.close()
    t.same(offsets(c.got), [7], 'subscribing below begin starts at begin')
  })

  needs('config', 'config: put, delete, load in write order, watch', async (t, h) => {
    const seen: ConfigRecord[] = []
    h.config!.watch((record) => seen.push(record))
    const site = { timezone: 'UTC', domain: 'a.example' }
    await h.config!.put({ kind: 'site', id: 'a', value: site })
    t.same(seen, [{ kind: 'site', id: 'a', value: site }], 'watchers ran before put resolved')
    t.not(seen[0].value, site, 'watchers get a copy')
    await h.config!.put({ kind: 'site', id: 'b', value: { n: 1 } })
    await h.config!.put({ kind: 'goal', id: 'a', value: ['x'] })
    await h.config!.put({ kind: 'site', id: 'a', value: { ...site, timezone: 'Europe/Paris' } })
    await h.config!.put({ kind: 'site', id: 'b', value: null })
    t.same(seen.at(-1), { kind: 'site', id: 'b', value: null }, 'deletes are watched too')
    const expected = [
      { kind: 'goal', id: 'a', value: ['x'] },
      { kind: 'site', id: 'a', value: { ...site, timezone: 'Europe/Paris' } },
    ]
    t.same(await h.config!.load(), expected, 'latest values, deletes gone, in write order')
    if (h.reopen) {
      await h.reopen()
      t.same(await h.config!.load(), expected, 'the same after a restart')
    }
  })

  groupContract(use)
}
