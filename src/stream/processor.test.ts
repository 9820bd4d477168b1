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
import { StreamProcessor } from './processor.js'
import { InteractiveQueries, decodeCursor, goalList, goalSessions } from '../query/index.js'
import { rebuild } from './rebuild.js'
import { PartitionState } from './partition-state.js'
import { dayOf, dayOfHourKey } from '../goals/index.js'
import type { GroupListener } from '../log/index.js'
import { ChangelogLost, type ChangelogTopic } from './changelog.js'

const DAY = 86_400_000
const NOW = Date.now()

async function open(dir: string, onError: (err: unknown) => void = (err) => t.fail(String(err))) {
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  await log.createTopic({ name: 'events', partitions: 3 })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  const store = await StateStore.open(join(dir, 'state'))
  const stream = new StreamProcessor({
    log, store, catalog, topic: 'events', exactThreshold: 4, snapshotIntervalMs: 3_600_000, retentionDays: 90,
    onError,
  })
  return { log, catalog, store, stream, close: async () => (await stream.stop(), await log.close(), await store.close()) }
}

const pageview = (session: string, path: string, ts: number): LoggedEvent =>
  ({ type: 'pageview', site_id: 'shop', session_id: session, path, ts, received_at: ts })

const append = (log: EmbeddedLog, events: LoggedEvent[]) =>
  log.append('events', events.map((e) => ({ key: eventKey(e.site_id, e.session_id), value: Buffer.from(JSON.stringify(e)), timestamp: e.ts })))

async function until(cond: () => boolean, deadlineMs = 2000) {
  for (let i = 0; i < deadlineMs / 10 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
}

t.before(initHash)

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'goalpost-proc-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('folds, backfills a new goal, and restores identical answers from a snapshot plus the log tail', async (t) => {
  const dir = tempDir(t)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
  const goal: Goal = { id: 'g1', site_id: 'shop', name: 'Visit /buy', goal_type: 'pageview', match_path: '/buy/**', created_at: new Date().toISOString() }

  const a = await open(dir)
  await a.catalog.put('site', 'shop', site)
  await a.stream.start()
  // 20 sessions; every third buys, session s0 buys on two days
  const events: LoggedEvent[] = []
  for (let i = 0; i < 20; i++) {
    events.push(pageview(`s${i}`, '/', NOW - 60_000 - i))
    if (i % 3 === 0) events.push(pageview(`s${i}`, `/buy/item-${i}`, NOW - 30_000 - i))
  }
  events.push(pageview('s0', '/buy/again', NOW - 2 * DAY))
  await append(a.log, events)
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length)

  // retroactive: the goal arrives after its events
  await a.catalog.put('goal', goal.id, goal)
  t.ok(await a.stream.whenBackfilled(goal.id, 5000))
  const before = goalList(a.stream.parts, site, [goal], 7)
  t.equal(before.goals[0].conversions, 7, 'sessions 0,3,...,18 converted; s0 on two days counts once')
  t.equal(before.total_sessions, 20)
  t.equal(goalList(a.stream.parts, site, [goal], 1).goals[0].conversions, 7)

  const lookup = (p: number, hks: string[]) => a.stream.summaries(p, hks)
  const page1 = await goalSessions(a.stream.parts, lookup, goal, site, 7, 4, null)
  t.equal(page1.sessions.length, 4)
  t.ok(page1.next_cursor)
  const times = page1.sessions.map((s) => Date.parse(s.timestamp))
  t.same([...times].sort((x, y) => y - x), times, 'newest first')

  await a.stream.snapshot()
  // events after the snapshot: only the log has them when the process dies
  await append(a.log, [pageview('late', '/buy/x', NOW - 1000)])
  await until(() => goalList(a.stream.parts, site, [goal], 7).goals[0].conversions === 8)
  const expected = goalList(a.stream.parts, site, [goal], 7, NOW)
  const expectedPage = await goalSessions(a.stream.parts, lookup, goal, site, 7, 25, null, NOW)
  // simulate a crash: no final snapshot, just drop the objects
  await a.log.close()
  await a.store.close()

  const b = await open(dir)
  await b.stream.start()
  t.same(goalList(b.stream.parts, site, [goal], 7, NOW), expected, 'identical list after restore')
  const pageAfter = await goalSessions(b.stream.parts, (p, h) => b.stream.summaries(p, h), goal, site, 7, 25, null, NOW)
  t.same(pageAfter, expectedPage, 'identical sessions after restore')
  await b.close()
})

t.test('past days\' sets are packed by the hourly pass; late events, snapshots and restores count exactly', async (t) => {
  const dir = tempDir(t)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
  const goal: Goal = { id: 'gp', site_id: 'shop', name: 'Buy', goal_type: 'pageview', match_path: '/buy/**', created_at: site.created_at }
  const a = await open(dir)
  await a.catalog.put('site', 'shop', site)
  await a.catalog.put('goal', goal.id, goal)
  await a.stream.start()
  const events: LoggedEvent[] = []
  for (let d = 0; d < 6; d++) for (let i = 0; i < 30; i++) events.push(pageview(`d${d}-${i}`, i % 2 ? '/buy/x' : '/', NOW - d * DAY - i * 1000))
  await append(a.log, events)
  const conversions = (parts: PartitionState[]) => goalList(parts, site, [goal], 7, NOW).goals[0].conversions
  await until(() => conversions(a.stream.parts) === 90)
  const sets = (parts: PartitionState[]) => parts.flatMap((p) => (p.goals.get(goal.id)?.days() ?? []).map((day) => ({ day, set: p.goals.get(goal.id)!.dayMap(day)! })))
  t.notOk(sets(a.stream.parts).some((s) => s.set.packed), 'nothing packed yet')
  await a.stream.packSettled(NOW)
  const today = dayOf(NOW, 'UTC')
  const all = sets(a.stream.parts)
  t.ok(all.filter((s) => s.day < today - 1).every((s) => s.set.packed), 'days before yesterday are packed')
  t.ok(all.filter((s) => s.day >= today - 1).every((s) => !s.set.packed), 'today and yesterday are not')
  const oldHours = a.stream.parts.flatMap((p) => [...(p.goals.get(goal.id)?.hourMaps() ?? [])]).filter(([hour]) => dayOfHourKey(hour) < today - 1)
  t.ok(oldHours.length > 0 && oldHours.every(([, set]) => set.packed), 'so are the hour sets of those days')
  t.equal(conversions(a.stream.parts), 90, 'the same conversions')
  // late: a new session on a packed day, an earlier time of a held session, a session's second day
  await append(a.log, [pageview('late', '/buy/y', NOW - 4 * DAY), pageview('d4-1', '/buy/z', NOW - 4 * DAY - 3_600_000), pageview('d3-1', '/buy/z', NOW - 4 * DAY + 5000)])
  await until(() => conversions(a.stream.parts) === 91)
  t.equal(conversions(a.stream.parts), 91, 'one new session; the others were counted already')
  await a.stream.snapshot()
  await a.stream.packSettled(NOW)
  const expected = goalList(a.stream.parts, site, [goal], 7, NOW)
  const days = [1, 2, 3, 4, 5].map((d) => a.stream.parts.reduce((n, p) => n + (p.goals.get(goal.id)?.conversions(today - d, today - d) ?? 0), 0))
  await a.log.close()
  await a.store.close()

  const b = await open(dir)
  await b.stream.start()
  t.same(goalList(b.stream.parts, site, [goal], 7, NOW), expected, 'identical after a restore')
  t.same([1, 2, 3, 4, 5].map((d) => b.stream.parts.reduce((n, p) => n + (p.goals.get(goal.id)?.conversions(today - d, today - d) ?? 0), 0)), days, 'day by day')
  await b.close()
})

t.test('a restart lets settled days go as it restores them; every answer reads them back the same, and late events into them count exactly', async (t) => {
  const dir = tempDir(t)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: new Date().toISOString() }
  const buy: Goal = { id: 'gb', site_id: 'shop', name: 'Buy', goal_type: 'pageview', match_path: '/buy/**', created_at: site.created_at }
  const cart: Goal = { id: 'gc', site_id: 'shop', name: 'Cart', goal_type: 'pageview', match_path: '/cart', created_at: site.created_at }
  const events: LoggedEvent[] = []
  for (let d = 0; d < 8; d++) {
    for (let i = 0; i < 40; i++) {
      const at = NOW - d * DAY - i * 60_000
      events.push(pageview(`d${d}-${i}`, '/', at - 1000))
      if (i % 2) events.push(pageview(`d${d}-${i}`, '/cart', at))
      if (i % 3 === 0) events.push(pageview(`d${d}-${i}`, '/buy/x', at + 500))
      // some sessions come back the next day and buy then
      if (i % 5 === 0 && d > 0) events.push(pageview(`d${d}-${i}`, '/buy/again', at + DAY + 700))
    }
  }
  const answers = async (q: InteractiveQueries) => {
    const pages: unknown[] = []
    let cursor = null
    for (let i = 0; i < 50; i++) {
      const page = await q.goalSessions(buy, site, 30, 10, cursor, NOW)
      pages.push(page.sessions.map((s) => [s.session_id, s.timestamp]))
      if (!page.next_cursor) break
      cursor = decodeCursor(page.next_cursor)
    }
    return {
      list: await q.goalList(site, [buy, cart], 30, NOW),
      today: await q.goalList(site, [buy], 1, NOW),
      pages,
      overlap: await q.goalOverlap(buy, cart, site, 30, NOW),
      report: await q.goalReport(buy, site, 30, 'day', NOW),
      breakdown: await q.goalBreakdown(cart, site, 30, 'entry_page', 10, NOW),
    }
  }
  const stored = (parts: PartitionState[]) => parts.reduce((n, p) => n + (p.goals.get(buy.id)?.storedCount ?? 0) + (p.goals.get(cart.id)?.storedCount ?? 0), 0)

  const a = await open(dir)
  await a.catalog.put('site', 'shop', site)
  await a.catalog.put('goal', buy.id, buy)
  await a.catalog.put('goal', cart.id, cart)
  await a.stream.start()
  await append(a.log, events)
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length)
  const expected = await answers(new InteractiveQueries({ processor: a.stream, catalog: a.catalog, self: 'http://a' }))
  t.equal(stored(a.stream.parts), 0, 'nothing written yet: every day in memory')
  await a.close()

  const b = await open(dir)
  await b.stream.start()
  const held = stored(b.stream.parts)
  t.ok(held > 0, `the restore let the settled days go (${held} goal days in the store only)`)
  const today = dayOf(NOW, 'UTC')
  t.ok(b.stream.parts.every((p) => [today, today - 1].every((d) => !p.goals.get(buy.id)?.isStored(d))), 'today and yesterday stay in memory')
  const queries = new InteractiveQueries({ processor: b.stream, catalog: b.catalog, self: 'http://b' })
  t.same(await answers(queries), expected, 'the same answers, from days read back')
  t.ok(b.stream.parts.some((p) => p.settled.loaded > 0), 'the questions read days back')

  // late: a new session on a settled day, and a settled day's session buying again today
  await append(b.log, [pageview('late', '/buy/late', NOW - 5 * DAY), pageview('d6-3', '/buy/today', NOW - 1000)])
  const buys = async () => (await queries.goalList(site, [buy], 30, NOW)).goals[0].conversions
  const before = expected.list.goals[0].conversions
  await until(() => b.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length + 2)
  t.equal(await buys(), before + 1, 'the new session counts once; the returning one was counted already')
  t.equal((await queries.goalList(site, [buy], 1, NOW)).goals[0].conversions, expected.today.goals[0].conversions + 1, 'today counts the returning session')
  t.same(b.stream.parts.flatMap((p) => p.goals.get(buy.id)?.multiDayCount ?? 0).reduce((x, y) => x + y, 0) > 0, true, 'which the side index links to its first day')
  await b.close()
})

t.test('deleting a goal drops its state', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.catalog.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' })
  await a.stream.start()
  await a.catalog.put('goal', 'g2', { id: 'g2', site_id: 'shop', name: 'x', goal_type: 'pageview', match_path: '/', created_at: '' })
  await append(a.log, [pageview('x', '/', NOW - 1000)])
  await until(() => a.stream.parts.some((p) => (p.goals.get('g2')?.size ?? 0) > 0))
  await a.catalog.put('goal', 'g2', null)
  t.notOk(a.stream.parts.some((p) => p.goals.has('g2')))
  await a.close()
})

t.test('a time zone change re-buckets the site from the log', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }
  await a.catalog.put('site', 'shop', site)
  await a.catalog.put('goal', 'g3', { id: 'g3', site_id: 'shop', name: 'x', goal_type: 'pageview', match_path: '/', created_at: '' })
  await a.stream.start()
  // one event per hour over two days: the two zones (14 h apart) split them into different days
  const events = Array.from({ length: 48 }, (_, i) => pageview(`h${i}`, '/', NOW - (i + 1) * 3_600_000))
  await append(a.log, events)
  await until(() => goalList(a.stream.parts, site, [], 3).total_sessions === 48)
  const daysIn = (tz: string) => [...new Set(events.map((e) => dayOf(e.ts, tz)))].sort()
  const heldDays = () => [...new Set(a.stream.parts.flatMap((p) => [...(p.sites.get('shop')?.days.keys() ?? [])]))].sort()
  t.same(heldDays(), daysIn('UTC'))

  const moved = { ...site, timezone: 'Pacific/Kiritimati' }
  await a.catalog.put('site', 'shop', moved)
  const converted = () => a.stream.parts.reduce((n, p) => n + (p.goals.get('g3')?.size ?? 0), 0)
  await until(() => JSON.stringify(heldDays()) === JSON.stringify(daysIn('Pacific/Kiritimati')) && converted() === 48)
  t.same(heldDays(), daysIn('Pacific/Kiritimati'), 'day buckets follow the new zone')
  const perDay = (tz: string, day: number) => events.filter((e) => dayOf(e.ts, tz) === day).length
  for (const day of daysIn('Pacific/Kiritimati')) {
    const counted = a.stream.parts.reduce((n, p) => n + (p.goals.get('g3')?.conversions(day, day) ?? 0), 0)
    t.equal(counted, perDay('Pacific/Kiritimati', day), `conversions of day ${day}`)
  }
  await a.close()

  // the rebuilt state survives a restart
  const b = await open(dir)
  await b.stream.start()
  const total = goalList(b.stream.parts, moved, [], 4).total_sessions
  t.equal(total, 48)
  await b.close()
})

t.test('summaries of sessions past retention leave the store', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.catalog.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' })
  await a.stream.start()
  await append(a.log, [pageview('old', '/', NOW - 80 * DAY), pageview('new', '/', NOW - 1000)])
  await until(() => a.stream.parts.reduce((n, p) => n + p.summaries.size, 0) === 2)
  // (a snapshot also moves idle summaries out of memory: note the keys first)
  const keys = a.stream.parts.map((p) => [...p.summaries.keys()])
  await a.stream.snapshot()
  const stored = async () => {
    let n = 0
    for (const p of a.stream.parts) for (const s of await a.store.getSummaries(p.partition, keys[p.partition])) if (s) n++
    return n
  }
  t.equal(await stored(), 2)
  // 11 days later the old session (80 days) is past the 90-day retention; the new one is not
  await a.stream.enforceRetention(NOW + 11 * DAY)
  t.equal(await stored(), 1)
  await a.close()
})

t.test('a rebuild from the log alone equals the live fold', async (t) => {
  const dir = tempDir(t)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }
  const goal: Goal = { id: 'g5', site_id: 'shop', name: 'x', goal_type: 'pageview', match_path: '/buy/*', created_at: '' }
  const a = await open(dir)
  await a.catalog.put('site', 'shop', site)
  await a.catalog.put('goal', goal.id, goal)
  await a.stream.start()
  const events: LoggedEvent[] = []
  for (let i = 0; i < 300; i++) events.push(pageview(`r${i % 70}`, i % 4 === 0 ? `/buy/${i}` : '/', NOW - (i % 3) * DAY - i))
  await append(a.log, events)
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length)
  const live = goalList(a.stream.parts, site, [goal], 7, NOW)

  const store = await StateStore.open(join(dir, 'rebuilt'))
  let progress = 0
  const result = await rebuild({ log: a.log, topic: 'events', catalog: a.catalog, store, exactThreshold: 4, retentionDays: 90, onProgress: (n) => (progress = n) })
  t.equal(result.records, events.length, 'every record read')
  t.equal(progress, events.length, 'progress reached the total')
  const parts = []
  for (let p = 0; p < 3; p++) {
    const state = new PartitionState(p, 4)
    await store.loadPartition(state)
    parts.push(state)
  }
  t.same(goalList(parts, site, [goal], 7, NOW), live, 'identical answers')
  t.ok(live.goals[0].conversions > 0 && live.total_sessions === 70)
  await store.close()
  await a.close()
})

t.test('a record that cannot be folded is set aside and the partition goes on', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.catalog.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' })
  await a.stream.start()
  const key = eventKey('shop', 'poison')
  await a.log.append('events', [{ key, value: Buffer.from('{not json'), timestamp: NOW }])
  await append(a.log, [pageview('poison', '/after', NOW - 1000)])
  const p = a.log.partitionFor('events', key)
  await until(() => (a.stream.parts.find((s) => s.partition === p)?.offset ?? 0) >= 2)
  t.equal(a.stream.deadLetters, 1, 'one record set aside')
  const set = await a.store.deadLetters(p)
  t.equal(set.length, 1)
  t.match(set[0].error, /JSON/)
  t.equal(set[0].value, '{not json', 'the record is kept as it was')
  t.equal(goalList(a.stream.parts, { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }, [], 1).total_sessions, 1, 'the next record was folded')
  await a.close()
})

t.test('a time zone changed while the node was down re-buckets on restore', async (t) => {
  const dir = tempDir(t)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }
  let a = await open(dir)
  await a.catalog.put('site', 'shop', site)
  await a.stream.start()
  const hourly: LoggedEvent[] = []
  for (let h = 0; h < 48; h++) hourly.push(pageview(`tz${h}`, '/', NOW - h * 3_600_000))
  await append(a.log, hourly)
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === hourly.length)
  await a.close()
  // the zone changes with no processor running: only the config log sees it
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  const tokyo: Site = { ...site, timezone: 'Asia/Tokyo' }
  await catalog.put('site', 'shop', tokyo)
  await log.close()

  a = await open(dir)
  await a.stream.start()
  const expected = new Map<number, number>()
  for (const e of hourly) expected.set(dayOf(e.ts, 'Asia/Tokyo'), (expected.get(dayOf(e.ts, 'Asia/Tokyo')) ?? 0) + 1)
  await until(() => [...expected].every(([day, n]) => a.stream.parts.reduce((m, s) => m + (s.sites.get('shop')?.days.get(day)?.count() ?? 0), 0) === n))
  for (const [day, n] of expected) {
    t.equal(a.stream.parts.reduce((m, s) => m + (s.sites.get('shop')?.days.get(day)?.count() ?? 0), 0), n, `day ${day} counted in Tokyo time`)
  }
  await a.close()
})

t.test('partitions snapshot one after another, and one failing keeps none of the others from its snapshot', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }
  await a.catalog.put('site', 'shop', site)
  await a.stream.start()
  const events = Array.from({ length: 60 }, (_, i) => pageview(`s${i}`, '/', NOW - 1000 - i))
  await append(a.log, events)
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length)
  t.equal(new Set(events.map((e) => a.log.partitionFor('events', eventKey(e.site_id, e.session_id)))).size, 3, 'every partition has changes to write')
  const real = a.store.openBatch.bind(a.store)
  let opened = 0
  let most = 0
  let commits = 0
  let failNext = true
  a.store.openBatch = () => {
    const batch = real()
    most = Math.max(most, ++opened)
    let closed = false
    const close = () => {
      if (!closed) opened--
      closed = true
    }
    return {
      add: batch.add,
      commit: async () => {
        // the commit takes a while, as a large one does: a snapshot that started meanwhile would overlap it
        await new Promise((resolve) => setTimeout(resolve, 20))
        if (failNext) {
          failNext = false
          throw new Error('injected commit failure')
        }
        await batch.commit()
        close()
        commits++
      },
      discard: async () => (close(), await batch.discard()),
    }
  }
  await t.rejects(a.stream.snapshot(), /injected commit failure/, 'the failure is reported')
  t.equal(most, 1, 'never more than one partition\'s batch open at a time')
  t.equal(commits, 2, 'the partitions after the failing one wrote theirs')
  await a.stream.snapshot()
  t.equal(commits, 5, 'the next snapshot writes all three, the failed one\'s changes with them')
  // what the store holds, read back partition by partition: each at the offset it folded to, with all its sessions
  const expected = goalList(a.stream.parts, site, [], 1, NOW)
  const loaded = await Promise.all(a.stream.parts.map(async (p) => {
    const state = new PartitionState(p.partition, 4)
    await a.store.loadPartition(state)
    return state
  }))
  t.same(loaded.map((p) => p.offset), a.stream.parts.map((p) => p.offset), 'each partition stored the offset it folded to')
  t.same(goalList(loaded, site, [], 1, NOW), expected, 'and the sessions it counted')
  await a.close()
})

t.test('a partition with many changed sessions snapshots before its interval is up', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.catalog.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' })
  await a.stream.start()
  const real = a.store.openBatch.bind(a.store)
  const sizes: number[] = []
  a.store.openBatch = () => {
    const batch = real()
    let summaries = 0
    return {
      add: (op) => {
        if (op.key.startsWith('s!')) summaries++
        batch.add(op)
      },
      commit: async () => {
        await batch.commit()
        sizes.push(summaries)
      },
      discard: batch.discard,
    }
  }
  // the interval is an hour: only the number of changed sessions can start these snapshots
  const events = Array.from({ length: 40_000 }, (_, i) => pageview(`s${i}`, '/', NOW - 1000 - i))
  for (let i = 0; i < events.length; i += 2000) await append(a.log, events.slice(i, i + 2000))
  await until(() => a.stream.parts.reduce((n, p) => n + p.offset, 0) === events.length, 20_000)
  await until(() => sizes.length >= 3, 20_000)
  t.ok(sizes.length >= 3, `snapshots taken while folding: ${sizes.join(', ')} summaries each`)
  t.ok(sizes.every((n) => n >= 8192), 'each started once its partition held 8 192 changed sessions')
  await a.close()
})

t.test('a transient store failure during a fold is retried with backoff, and the partition catches up', async (t) => {
  const dir = tempDir(t)
  const reported: string[] = []
  const a = await open(dir, (err) => reported.push(String(err)))
  const site: Site = { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' }
  await a.catalog.put('site', 'shop', site)
  await a.stream.start()
  // an injected storage fault: the next two summary reads fail, as an I/O error would
  const real = a.store.getSummaries.bind(a.store)
  let failures = 2
  a.store.getSummaries = async (p, hks) => {
    if (failures > 0) {
      failures--
      throw Object.assign(new Error('injected I/O error'), { code: 'LEVEL_IO_ERROR' })
    }
    return real(p, hks)
  }
  const key = eventKey('shop', 'retry-me')
  // a session stored before, so its fold must read the store
  await append(a.log, [pageview('retry-me', '/', NOW - 5000)])
  const p = a.log.partitionFor('events', key)
  await until(() => (a.stream.parts.find((s) => s.partition === p)?.offset ?? 0) >= 1)
  await a.stream.snapshot()
  a.stream.tasks.get(p)!.state.summaries.clear()
  await append(a.log, [pageview('retry-me', '/later', NOW - 1000)])
  await until(() => a.stream.unreadyReason !== undefined)
  t.match(a.stream.unreadyReason, new RegExp(`partition ${p} keeps failing: injected I/O error`), '/readyz names the partition and cause while it fails')
  await until(() => (a.stream.parts.find((s) => s.partition === p)?.offset ?? 0) >= 2)
  t.equal(failures, 0, 'both failures were met')
  t.equal(a.stream.unreadyReason, undefined, 'ready again once the fold went through')
  t.equal(a.stream.deadLetters, 0, 'nothing set aside: the failure was the store, not the record')
  t.equal(reported.length, 2, 'each failure was reported')
  t.equal(goalList(a.stream.parts, site, [], 1).total_sessions, 1)
  await a.close()
})

t.test('a task whose changelog another owner claimed stops without writing its store; the partition is taken up again when asked', async (t) => {
  const dir = tempDir(t)
  const log = await EmbeddedLog.open({ dir: join(dir, 'log') })
  await log.createTopic({ name: 'events', partitions: 3 })
  const catalog = new Catalog(new EmbeddedConfigLog(log))
  await catalog.load()
  const store = await StateStore.open(join(dir, 'state'))
  // a changelog whose writes of fenced partitions are refused, as a newer owner's claim makes them
  const fenced = new Set<number>()
  const claims: number[] = []
  const changelog: ChangelogTopic = {
    claim: async (p) => {
      claims.push(p)
      let end = 0
      return {
        partition: p,
        restore: async () => 0,
        write: async () => {
          if (fenced.has(p)) throw new ChangelogLost(p, new Error('claimed by another owner'))
          return ++end
        },
        release: async () => undefined,
      }
    },
  }
  // the group: what the processor asks of it is recorded, and whether it vouches for its partitions is set here
  let current = true
  const restarts: number[] = []
  let listener: GroupListener | undefined
  const joinAlone = log.join.bind(log)
  log.join = async (topic, group, member, l) => {
    listener = l
    const m = await joinAlone(topic, group, member, l)
    return { members: () => m.members(), owned: () => m.owned(), leave: () => m.leave(), current: () => current, restart: (ps) => void restarts.push(...ps) }
  }
  const stream = new StreamProcessor({
    log, store, catalog, topic: 'events', changelog, exactThreshold: 4, snapshotIntervalMs: 3_600_000, retentionDays: 90, onError: () => undefined,
  })
  t.teardown(async () => {
    await stream.stop()
    await log.close()
    await store.close()
  })
  await catalog.put('site', 'shop', { site_id: 'shop', domain: null, timezone: 'UTC', created_at: '' })
  await stream.start()
  t.same(claims, [0, 1, 2], 'each partition\'s changelog is claimed before it is restored')
  const events = Array.from({ length: 30 }, (_, i) => pageview(`z${i}`, '/', NOW - 1000 - i))
  await append(log, events)
  await until(() => stream.parts.reduce((n, p) => n + p.offset, 0) === events.length)
  await stream.snapshot()
  const stored = async (p: number) => {
    const state = new PartitionState(p, 4)
    await store.loadPartition(state)
    return state.offset
  }
  const offsetBefore = await stored(1)

  fenced.add(1)
  // sessions of partition 1 that the refused snapshot would have written
  const late = Array.from({ length: 40 }, (_, i) => `late-${i}`).filter((s) => log.partitionFor('events', eventKey('shop', s)) === 1).slice(0, 3)
  await append(log, late.map((s, i) => pageview(s, '/', NOW - 500 + i)))
  await until(() => stream.parts.reduce((n, p) => n + p.offset, 0) === events.length + late.length)
  t.ok(late.length === 3 && (stream.parts.find((s) => s.partition === 1)?.offset ?? 0) > offsetBefore, 'partition 1 folded past its stored offset')
  await t.rejects(stream.snapshot(), ChangelogLost, 'the fenced partition\'s snapshot is refused')
  t.notOk(stream.tasks.has(1), 'its task stopped')
  t.ok(stream.tasks.has(0) && stream.tasks.has(2), 'the others go on')
  t.equal(await stored(1), offsetBefore, 'nothing of the refused snapshot reached the store')
  t.same(restarts, [1], 'the group is asked to hand the partition over again, should this node still own it')

  // the group hands it over again (revoked, then assigned): a new claim, a new task
  fenced.delete(1)
  await listener!.revoked([1])
  await listener!.assigned([1])
  t.ok(stream.tasks.has(1), 'the partition is taken up again')
  t.equal(claims.filter((p) => p === 1).length, 2, 'with a claim of its own')

  current = false
  t.equal(stream.tasks.size, 0, 'a node the group has not confirmed for a while answers from none of its partitions')
  t.equal(stream.parts.length, 3, 'while it still holds them')
  current = true
  t.equal(stream.tasks.size, 3)
})
