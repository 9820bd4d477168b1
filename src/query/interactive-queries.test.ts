// Queries answer completely or not at all: while a partition catches up with the log, while a site's
// days are rebuilt in a new time zone and while a new goal counts the retained log, every answer is
// either the whole truth or PartitionsUnavailable (a 503 with Retry-After at the HTTP edge).
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedLog, EmbeddedConfigLog } from '../log/index.js'
import { Catalog } from '../catalog/index.js'
import { StateStore } from '../store/index.js'
import { initHash } from '../sketch/index.js'
import { eventKey, type LoggedEvent } from '../schema/index.js'
import type { Goal, Site } from '../schema/index.js'
import { PartitionTask, StreamProcessor } from '../stream/index.js'
import { InteractiveQueries, PartitionsUnavailable } from './interactive-queries.js'
import type { PartialQuery } from './partials.js'

const NOW = Date.now()
const SESSIONS = 20_000
const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date(NOW).toISOString() }
const goal: Goal = { id: 'g-buy', site_id: 'shop', name: 'Visit /buy', goal_type: 'pageview', match_path: '/buy', created_at: new Date(NOW).toISOString() }

t.before(initHash)

async function setUp(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-iq-'))
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  await log.createTopic({ name: 'events', partitions: 3 })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  await catalog.put('site', 'shop', site)
  // every session views /, every other one /buy, all in the last hour (inside any zone's 7 days)
  const events: LoggedEvent[] = []
  for (let i = 0; i < SESSIONS; i++) {
    const ts = NOW - 3_600_000 + (i % 3_000_000)
    events.push({ type: 'pageview', site_id: 'shop', session_id: `s${i}`, path: '/', ts, received_at: ts })
    if (i % 2 === 0) events.push({ type: 'pageview', site_id: 'shop', session_id: `s${i}`, path: '/buy', ts: ts + 1, received_at: ts + 1 })
  }
  for (let i = 0; i < events.length; i += 5000) {
    await log.append('events', events.slice(i, i + 5000).map((e) => ({ key: eventKey(e.site_id, e.session_id), value: Buffer.from(JSON.stringify(e)), timestamp: e.ts })))
  }
  const store = await StateStore.open(join(dir, 'state'))
  const stream = new StreamProcessor({
    log, store, catalog, topic: 'events', exactThreshold: 100_000, snapshotIntervalMs: 3_600_000, retentionDays: 90,
    onError: (err) => t.fail(String(err)),
  })
  const queries = new InteractiveQueries({ processor: stream, catalog, self: '', deadlineMs: 50, backfillWaitMs: 0 })
  t.teardown(async () => {
    await stream.stop()
    await log.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { log, catalog, store, stream, queries }
}

/**
 * Asks for a partition's partial before each read of the log that replays it (a backfill or a
 * re-bucketing reads its partition in chunks, yielding between them, as a query arriving then would).
 */
function probeReplays(t: Test, log: EmbeddedLog, queries: InteractiveQueries, query: PartialQuery): string[] {
  const probes: string[] = []
  const read = log.read.bind(log)
  log.read = async (topic, partition, from, max) => {
    const answer = await queries.local(query, [partition])
    probes.push(answer.partials.length ? 'answered' : (answer.unready?.[0]?.reason ?? 'missing'))
    return read(topic, partition, from, max)
  }
  t.teardown(() => void (log.read = read))
  return probes
}

const stillRunning = (stream: StreamProcessor, what: (task: PartitionTask) => boolean) => async () => {
  while ([...stream.tasks.values()].some(what)) await new Promise((resolve) => setTimeout(resolve, 5))
}

t.test('while partitions catch up with the log after they are assigned', async (t) => {
  const { catalog, stream, queries } = await setUp(t)
  await catalog.put('goal', goal.id, goal)
  // asks for the partition's own partial just before each of its batches is folded, as a query
  // arriving then would
  const probes: string[] = []
  const fold = PartitionTask.prototype.fold
  PartitionTask.prototype.fold = async function (this: PartitionTask, records) {
    const query = { kind: 'goals' as const, site_id: 'shop', window: { from: 0, to: 1e6 }, goal_ids: [goal.id] }
    const answer = await queries.local(query, [this.partition])
    probes.push(answer.partials.length ? 'answered' : (answer.unready?.[0]?.reason ?? 'missing'))
    return fold.call(this, records)
  }
  t.teardown(() => void (PartitionTask.prototype.fold = fold))
  await stream.start()
  PartitionTask.prototype.fold = fold
  t.ok(probes.length >= 3, `${probes.length} batches folded while catching up`)
  t.same(probes.filter((p) => !/^is catching up with the log \(offset \d+ of \d+\)$/.test(p)), [], 'every partial asked for before the last batch was refused as catching up')
  const a = await queries.goalList(site, [goal], 7)
  t.equal(a.total_sessions, SESSIONS, 'complete once caught up')
  t.equal(a.goals[0].conversions, SESSIONS / 2)
})

t.test('while a site is re-bucketed in a new time zone', async (t) => {
  const { log, catalog, stream, queries } = await setUp(t)
  await catalog.put('goal', goal.id, goal)
  await stream.start()
  const moved = { ...site, timezone: 'Pacific/Kiritimati' }
  const probes = probeReplays(t, log, queries, { kind: 'goals', site_id: 'shop', window: { from: 0, to: 1e6 }, goal_ids: [goal.id] })
  await catalog.put('site', 'shop', moved)
  await stillRunning(stream, (task) => task.rebucketing('shop'))()
  t.ok(probes.length >= 3, `${probes.length} reads while rebuilding`)
  t.same(probes.filter((p) => p !== "is rebuilding site shop's days in its new time zone"), [], 'every partial asked for meanwhile was refused as rebuilding')
  const a = await queries.goalList(moved, [goal], 7)
  t.equal(a.total_sessions, SESSIONS, 'complete once rebuilt')
  t.equal(a.goals[0].conversions, SESSIONS / 2)
})

t.test('while a new goal counts the retained log', async (t) => {
  const { log, catalog, stream, queries } = await setUp(t)
  await stream.start()
  const probes = probeReplays(t, log, queries, { kind: 'sessions', goal_id: goal.id, window: { from: 0, to: 1e6 }, limit: 5, cursor_ts: null })
  await catalog.put('goal', goal.id, goal)
  await stillRunning(stream, (task) => task.backfilling(goal.id) !== undefined)()
  t.ok(probes.length >= 3, `${probes.length} reads while counting`)
  t.same(probes.filter((p) => p !== 'is still counting goal g-buy over the retained log'), [], 'every partial asked for meanwhile was refused as counting')
  const a = await queries.goalList(site, [goal], 7)
  t.equal(a.goals[0].conversions, SESSIONS / 2, 'complete once counted')
  const sessions = await queries.goalSessions(goal, site, 7, 5, null)
  t.equal(sessions.conversions, SESSIONS / 2)
})

t.test('the refusal names each partition with its reason', async (t) => {
  const { catalog, stream, queries } = await setUp(t)
  await stream.start()
  await catalog.put('site', 'shop', { ...site, timezone: 'Asia/Tokyo' })
  const err = await queries.goalList({ ...site, timezone: 'Asia/Tokyo' }, [], 7).then(() => undefined, (e: unknown) => e)
  // the re-bucketing may be over before the first look: then the answer is complete, not refused
  if (err !== undefined) {
    t.type(err, PartitionsUnavailable)
    t.match((err as Error).message, /^partition [\d, ]+ is rebuilding site shop's days in its new time zone; nothing partial is answered/)
  } else t.pass('rebuilt before the first look')
})

t.test('a re-bucketing that starts while a query reads is not answered half-read: the query is asked again', async (t) => {
  const { catalog, stream, queries } = await setUp(t)
  await catalog.put('goal', goal.id, goal)
  await stream.start()
  const moved = { ...site, timezone: 'Pacific/Kiritimati' }
  // the expansion reads stored summaries between its partitions' walks: the zone changes during the first read
  const summaries = stream.summaries.bind(stream)
  let moves = 0
  stream.summaries = async (p, hks) => {
    if (moves++ === 0) await catalog.put('site', 'shop', moved)
    return summaries(p, hks)
  }
  t.teardown(() => void (stream.summaries = summaries))
  const answer = await queries.local({ kind: 'sessions', goal_id: goal.id, window: { from: 0, to: 1e6 }, limit: 5, cursor_ts: null }, [0, 1, 2])
  t.ok(moves > 0, 'the zone changed during the query')
  t.same(answer.partials, [], 'no partial answered')
  t.same(answer.unready.map((u) => u.reason), Array(3).fill('changed while the query read it (a re-bucketing or a new owner)'), 'each partition asked again, and why')
  await stillRunning(stream, (task) => task.rebucketing('shop'))()
  const a = await queries.goalList(moved, [goal], 7)
  t.equal(a.goals[0].conversions, SESSIONS / 2, 'complete once rebuilt')
})
