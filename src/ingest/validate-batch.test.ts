import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { validateBatch } from './validate-batch.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = { now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: true }

const event = (i: number, extra: Record<string, unknown> = {}) => ({
  type: 'pageview',
  site_id: 's1',
  session_id: `sess-${i}`,
  path: `/p/${i}`,
  ...extra,
})
const batch = (n: number) => Array.from({ length: n }, (_, i) => event(i))

t.test('the body must be an array of 1 to 1000 events', async (t) => {
  for (const raw of [null, {}, event(0), 'x', 3]) {
    t.same(validateBatch(raw, ctx), { ok: false, error: 'body must be a JSON array of events', errors: [] }, JSON.stringify(raw))
  }
  t.same(validateBatch([], ctx), { ok: false, error: 'batch is empty', errors: [] })
  t.same(validateBatch(batch(1001), ctx), { ok: false, error: 'batch has more than 1000 events', errors: [] })
  const full = validateBatch(batch(1000), ctx)
  t.equal(full.ok, true)
  if (full.ok) t.equal(full.accepted, 1000)
})

t.test('all valid: every event in order, stamped', async (t) => {
  const r = validateBatch(batch(3), ctx)
  t.equal(r.ok, true)
  if (!r.ok) return
  t.equal(r.accepted, 3)
  t.same(r.results.map((x) => x.event.session_id), ['sess-0', 'sess-1', 'sess-2'])
  t.ok(r.results.every((x) => x.kind === 'accept' && x.event.received_at === NOW))
})

t.test('bot events count as accepted and come back as drops', async (t) => {
  const raw = [event(0), event(1, { user_agent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' })]
  const r = validateBatch(raw, ctx)
  t.equal(r.ok, true)
  if (!r.ok) return
  t.equal(r.accepted, 2)
  t.same(r.results.map((x) => x.kind), ['accept', 'drop'])
})

t.test('every bad index is reported; the summary names the count and the first problem', async (t) => {
  const raw = [event(0), event(1, { session_id: 'a b' }), event(2), event(3, { type: 'custom_event' }), event(4)]
  const r = validateBatch(raw, ctx)
  t.equal(r.ok, false)
  if (r.ok) return
  t.same(r.errors, [
    { index: 1, error: 'session_id must match ^[A-Za-z0-9._:-]+$' },
    { index: 3, error: 'event_name is required for custom_event' },
  ])
  t.equal(r.error, '2 of 5 events are invalid; first: events[1]: session_id must match ^[A-Za-z0-9._:-]+$')
})

t.test('one bad event', async (t) => {
  const r = validateBatch([event(0), event(1, { site_id: 'nope' })], ctx)
  t.same(r, {
    ok: false,
    error: '1 of 2 events is invalid; first: events[1]: unknown site_id nope',
    errors: [{ index: 1, error: 'unknown site_id nope' }],
  })
})

t.test('items that are not objects', async (t) => {
  const r = validateBatch([event(0), null, [event(2)], 'x'], ctx)
  t.equal(r.ok, false)
  if (r.ok) return
  t.same(r.errors.map((e) => e.index), [1, 2, 3])
  t.ok(r.errors.every((e) => e.error === 'event must be a JSON object'))
  t.equal(r.error, '3 of 4 events are invalid; first: events[1]: event must be a JSON object')
})

t.test('every event is checked even when the first one is bad', async (t) => {
  const raw = batch(1000).map((e, i) => (i % 100 === 0 ? { ...e, type: 'nope' } : e))
  const r = validateBatch(raw, ctx)
  t.equal(r.ok, false)
  if (r.ok) return
  t.same(r.errors.map((e) => e.index), [0, 100, 200, 300, 400, 500, 600, 700, 800, 900])
  t.match(r.error, /^10 of 1000 events are invalid; first: events\[0\]: type must be one of /)
})
