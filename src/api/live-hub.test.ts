import t from 'tap'
import type { SendResult, Socket } from '../http/index.js'
import type { GoalList, Site } from '../schema/index.js'
import { LiveHub, SITE_GONE, type Closing } from './live-hub.js'

/** A socket that records what it is sent; `buffered` and `result` play a slow reader. */
class RecordingSocket implements Socket {
  sent: string[] = []
  ended: Closing | null = null
  destroyed = false
  buffered = 0
  result: SendResult = 'sent'
  get closed(): boolean {
    return this.ended !== null || this.destroyed
  }
  send(text: string): SendResult {
    if (this.result !== 'dropped') this.sent.push(text)
    return this.result
  }
  bufferedAmount(): number {
    return this.buffered
  }
  end(code: number, reason: string): void {
    this.ended = { code, reason }
  }
  destroy(): void {
    this.destroyed = true
  }
}

const site = (id: string): Site => ({ site_id: id, domain: null, timezone: 'UTC', created_at: '2026-01-01T00:00:00.000Z' })
const body = (id: string, days: number, total: number): GoalList =>
  ({ site_id: id, days, from: '2026-01-01', to: '2026-01-01', timezone: 'UTC', total_sessions: total, goals: [] })

/** A hub over in-memory totals, counting how often each (site, days) body is computed. */
function fixture(opts: { minGapMs?: number } = {}) {
  const sites = new Map([['a', site('a')], ['b', site('b')]])
  const totals = new Map<string, number>()
  const computed = new Map<string, number>()
  const errors: unknown[] = []
  let now = 10_000
  let failing = false
  const hub = new LiveHub({
    goals: async (s, days) => {
      if (failing) throw new Error('partition unreachable')
      computed.set(`${s.site_id}/${days}`, (computed.get(`${s.site_id}/${days}`) ?? 0) + 1)
      return body(s.site_id, days, totals.get(s.site_id) ?? 0)
    },
    siteOf: (id) => sites.get(id),
    onError: (err) => errors.push(err),
    minGapMs: opts.minGapMs ?? 1000,
    maxBufferedBytes: 100,
    now: () => now,
  })
  return {
    hub, sites, totals, computed, errors,
    advance: (ms: number) => (now += ms),
    fail: (on: boolean) => (failing = on),
  }
}

const allowed = () => null
const totalOf = (text: string | undefined) => (text === undefined ? undefined : (JSON.parse(text) as GoalList).total_sessions)

t.test('the body is sent on joining, then only when it changes', async (t) => {
  const f = fixture()
  const s = new RecordingSocket()
  await f.hub.join(s, 'a', 7, allowed)
  t.same(s.sent.map(totalOf), [0], 'sent at once')
  f.advance(1000)
  await f.hub.tick()
  t.equal(s.sent.length, 1, 'unchanged: nothing sent')
  f.totals.set('a', 3)
  await f.hub.tick()
  t.same(s.sent.map(totalOf), [0, 3], 'changed: sent')
  t.same(JSON.parse(s.sent[1]), body('a', 7, 3), 'the body is the goals answer, encoded')
})

t.test('each (site, days) body is computed once per tick, whatever the number of sockets', async (t) => {
  const f = fixture()
  const sockets = [new RecordingSocket(), new RecordingSocket(), new RecordingSocket(), new RecordingSocket()]
  await Promise.all([f.hub.join(sockets[0], 'a', 7, allowed), f.hub.join(sockets[1], 'a', 7, allowed), f.hub.join(sockets[2], 'a', 7, allowed), f.hub.join(sockets[3], 'b', 7, allowed)])
  t.equal(f.computed.get('a/7'), 1, 'three joins arriving together share one computation')
  f.computed.clear()
  f.advance(1000)
  f.totals.set('a', 5)
  await f.hub.tick()
  t.same(Object.fromEntries(f.computed), { 'a/7': 1, 'b/7': 1 }, 'one computation per group per tick')
  t.same(sockets.map((s) => s.sent.length), [2, 2, 2, 1], 'every socket of the changed group got it')
})

t.test('a change inside the gap is held, and the newest body sent when the gap ends', async (t) => {
  const f = fixture({ minGapMs: 40 })
  const s = new RecordingSocket()
  await f.hub.join(s, 'a', 1, allowed)
  f.totals.set('a', 1)
  await f.hub.tick()
  f.totals.set('a', 2)
  await f.hub.tick()
  t.same(s.sent.map(totalOf), [0], 'held while the gap lasts')
  f.advance(40)
  const deadline = Date.now() + 2000
  while (s.sent.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same(s.sent.map(totalOf), [0, 2], 'the newest body once the gap ended; the intermediate one never')
})

t.test('a change reverted inside the gap sends nothing', async (t) => {
  const f = fixture({ minGapMs: 30 })
  const s = new RecordingSocket()
  await f.hub.join(s, 'a', 1, allowed)
  f.totals.set('a', 1)
  await f.hub.tick()
  f.totals.set('a', 0)
  await f.hub.tick()
  f.advance(1000)
  await f.hub.tick()
  t.same(s.sent.map(totalOf), [0], 'nothing to tell')
})

t.test('a socket whose access ended is closed with its reason', async (t) => {
  const f = fixture()
  const s = new RecordingSocket()
  let closing: Closing | null = null
  await f.hub.join(s, 'a', 1, () => closing)
  closing = { code: 4403, reason: 'no access to site a' }
  await f.hub.tick()
  t.same(s.ended, closing)
  t.equal(f.hub.size, 0, 'and forgotten')
})

t.test('a site removed while watched closes its sockets with 4404', async (t) => {
  const f = fixture()
  const s = new RecordingSocket()
  await f.hub.join(s, 'b', 1, allowed)
  f.sites.delete('b')
  await f.hub.tick()
  t.same(s.ended, { code: SITE_GONE, reason: 'site b not found' })
  const late = new RecordingSocket()
  await f.hub.join(late, 'b', 1, allowed)
  t.same(late.ended, { code: SITE_GONE, reason: 'site b not found' }, 'joining a gone site closes too')
})

t.test('slow readers are dropped, not buffered', async (t) => {
  const f = fixture()
  const behind = new RecordingSocket()
  const refusing = new RecordingSocket()
  const fine = new RecordingSocket()
  for (const s of [behind, refusing, fine]) await f.hub.join(s, 'a', 1, allowed)
  behind.buffered = 101
  refusing.result = 'dropped'
  f.advance(1000)
  f.totals.set('a', 9)
  await f.hub.tick()
  t.ok(behind.destroyed, 'over the buffered limit: dropped')
  t.equal(behind.sent.length, 1, 'and nothing more queued for it')
  t.ok(refusing.destroyed, 'a send uWS refused: dropped')
  t.notOk(fine.destroyed)
  t.same(fine.sent.map(totalOf), [0, 9])
  t.equal(f.hub.size, 1)
})

t.test('a failing computation is reported and the sockets stay', async (t) => {
  const f = fixture()
  const s = new RecordingSocket()
  await f.hub.join(s, 'a', 1, allowed)
  f.fail(true)
  await f.hub.tick()
  t.match(f.errors, [/partition unreachable/], 'reported')
  t.equal(f.hub.size, 1, 'still watching')
  f.fail(false)
  f.advance(1000)
  f.totals.set('a', 4)
  await f.hub.tick()
  t.same(s.sent.map(totalOf), [0, 4], 'updates resume')
})

t.test('a socket that left gets nothing more, and a closed one is never joined', async (t) => {
  const f = fixture()
  const s = new RecordingSocket()
  await f.hub.join(s, 'a', 1, allowed)
  f.hub.leave(s)
  f.advance(1000)
  f.totals.set('a', 2)
  await f.hub.tick()
  t.equal(s.sent.length, 1)
  const gone = new RecordingSocket()
  gone.destroyed = true
  await f.hub.join(gone, 'a', 1, allowed)
  t.equal(f.hub.size, 0)
  t.equal(gone.sent.length, 0)
})
