import t from 'tap'
import { validateEvent } from '../ingest/index.js'
import { BENCH_GOALS } from './bench-goals.js'
import { parseMix } from './event-mix.js'
import { SESSION_MARK } from './event-templates.js'
import { blockHex, CLASSES, SyntheticStream, type StreamShape } from './synthetic-stream.js'
import { Tally } from './tally.js'

const shape = (over: Partial<StreamShape> = {}): StreamShape => ({
  siteIds: ['shop'], goals: BENCH_GOALS.slice(0, 3), mix: parseMix('pageview=70,custom_event=30'),
  eventsPerSession: 6, openSessions: 200, run: 'r1', ...over,
})
const sessionOf = (body: string) => (JSON.parse(body) as { session_id: string }).session_id

t.test('fresh: every event opens a session of its own', async (t) => {
  const s = new SyntheticStream(shape({ eventsPerSession: 1 }))
  const ids = new Set(Array.from({ length: 1000 }, (_, i) => sessionOf(s.body(i))))
  t.equal(ids.size, 1000)
})

t.test('each session gets its events in step order, openSessions events apart', async (t) => {
  const s = new SyntheticStream(shape())
  const steps = new Map<number, number[]>()
  for (let seq = 0; seq < 6 * 200 * 3; seq++) {
    const { session, step } = s.slot(seq)
    const seen = steps.get(session) ?? []
    seen.push(step)
    steps.set(session, seen)
  }
  t.equal(steps.size, 600, 'three rounds of 200 sessions')
  t.ok([...steps.values()].every((x) => x.join() === '0,1,2,3,4,5'), 'six events each, steps 0…5')
  t.same(s.slot(0), { session: 0, step: 0, site: 0, cls: 0 })
  t.same(s.slot(200), { session: 0, step: 1, site: 0, cls: 0 })
  t.same(s.slot(1201), { session: 201, step: 0, site: 0, cls: 1 })
})

t.test('a session id is the run, its block in hex and its class', async (t) => {
  const s = new SyntheticStream(shape({ eventsPerSession: 1, openSessions: 100 }))
  t.equal(sessionOf(s.body(12345)), `r1-${blockHex(12345)}45`)
  t.equal(blockHex(12345), '00000000007b')
  t.notOk(s.body(7).includes(SESSION_MARK))
  t.ok(s.templates().every((x) => x.includes(SESSION_MARK)), 'templates keep the mark for the load generator')
  t.equal(s.templates().length, CLASSES, 'one template per class and step')
})

t.test('sites take sessions in blocks of 100; a pool wraps session numbers', async (t) => {
  const s = new SyntheticStream(shape({ siteIds: ['a', 'b', 'c'], eventsPerSession: 1 }))
  t.same([0, 99, 100, 250, 300].map((n) => s.siteOf(n)), ['a', 'a', 'b', 'c', 'a'])
  const pooled = new SyntheticStream(shape({ eventsPerSession: 1, sessionPool: 150 }))
  t.equal(new Set(Array.from({ length: 1000 }, (_, i) => sessionOf(pooled.body(i)))).size, 150)
})

t.test('every event of every type passes the service\'s own validation', async (t) => {
  const all = parseMix('pageview=1,pageleave=1,custom_event=1,web_vitals=1,external_link=1,error=1,payment=1,identify=1,button_click=1,form_submit=1,copy=1')
  const s = new SyntheticStream(shape({ mix: all, eventsPerSession: 2 }))
  const ctx = { now: Date.now(), retentionMs: 86_400_000, site: (id: string) => ({ site_id: id, domain: null, timezone: 'UTC' }), botFilter: true }
  const types = new Set<string>()
  for (let seq = 0; seq < 400; seq++) {
    const r = validateEvent(JSON.parse(s.body(seq)), ctx)
    t.equal(r.kind, 'accept', `event ${seq}: ${r.kind === 'reject' ? r.error : r.kind === 'drop' ? r.reason : ''}`)
    if (r.kind !== 'reject') types.add(r.event.type)
  }
  t.equal(types.size, 11, 'all eleven types appear')
})

t.test('a batch body is the array of consecutive events', async (t) => {
  const s = new SyntheticStream(shape())
  const batch = JSON.parse(s.batchBody(500, 3)) as unknown[]
  t.same(batch, [500, 501, 502].map((n) => JSON.parse(s.body(n))))
})

t.test('the tally counts distinct sessions and the sessions that completed each goal', async (t) => {
  const s = new SyntheticStream(shape())
  const tally = new Tally(s)
  const sessions = new Set<string>()
  const converted = BENCH_GOALS.slice(0, 3).map(() => new Set<string>())
  for (let seq = 0; seq < 3000; seq += 2) {
    tally.add(seq)
    const e = JSON.parse(s.body(seq)) as { session_id: string; type: string; path?: string; event_name?: string }
    sessions.add(e.session_id)
    BENCH_GOALS.slice(0, 3).forEach((g, i) => g.matches(e) && converted[i].add(e.session_id))
  }
  const [got] = tally.expected()
  t.equal(got.events, 1500)
  t.equal(got.sessions, sessions.size)
  t.same(got.conversions, converted.map((c) => c.size))
  t.ok(got.conversions.every((n) => n > 0), 'every goal converts some sessions')
  t.same(Tally.ofFirst(s, 10, 100), (() => { const x = new Tally(s); x.add(0, 1000); return x.expected() })())
})

t.test('openSessions must be a multiple of 100', async (t) => {
  t.throws(() => new SyntheticStream(shape({ openSessions: 150 })), /multiple of 100/)
})
