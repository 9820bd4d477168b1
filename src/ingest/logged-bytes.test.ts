import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { parseJsonBody } from './body.js'
import { validateEvent } from './validate-event.js'
import { loggedBytes } from './logged-bytes.js'
import { validateBatch } from './validate-batch.js'
import { objectElementRanges } from './array-elements.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = {
  now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: true,
  origin: 'https://example.com', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0',
}

/** what the route does: parse the body, validate, build the logged bytes */
function logged(text: string | Buffer) {
  const body = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const parsed = parseJsonBody(body)
  if (!parsed.ok) throw new Error(parsed.error)
  const r = validateEvent(parsed.value, ctx)
  if (r.kind !== 'accept') throw new Error(`not accepted: ${JSON.stringify(r)}`)
  return { event: r.event, added: r.added, bytes: loggedBytes(body, r.event, r.added) }
}

const base = '"type":"pageview","site_id":"s1","session_id":"sess-1"'

t.test('the logged bytes parse to exactly the validated event, whatever validation did', async (t) => {
  const bodies = [
    `{${base}}`,
    `{${base},"url":"https://example.com/a/b?q=1"}`,
    `{${base},"path":"/x","user_agent":"Mozilla/5.0 Gecko/20100101 Firefox/121.0"}`,
    `  {${base},"screen":{"width":1,"height":2}}  \n`,
    `{${base},"referrer":null,"screen":{"width":null}}`,
    `{${base},"unknown":1}`,
    `{${base},"screen":{"width":1,"depth":24}}`,
    `{${base},"timestamp":"2026-11-22T11:59:00Z"}`,
    `{${base},"title":"${'t'.repeat(3000)}"}`,
    `{${base},"ts":1,"received_at":2}`,
    `{${base},"site_id":"s1","properties":{"k":"v\\u00e9\\n","n":null},"utm":{"source":"news"}}`,
    `{"__proto__":{"x":1},${base}}`,
    `{${base},"title":"caf\u00e9 \u{1F600} \\"quoted\\""}`,
  ]
  for (const text of bodies) {
    const { event, bytes } = logged(text)
    t.same(JSON.parse(bytes.toString('utf8')), JSON.parse(JSON.stringify(event)), text.slice(0, 80))
  }
})

t.test('an event validation only added to keeps the body bytes; any removal or cut serializes it', async (t) => {
  const kept = logged(`{${base},"url":"https://example.com/a/b"}`)
  t.same(kept.added, ['user_agent', 'path', 'ts', 'received_at'])
  t.equal(kept.bytes.toString().indexOf(`{${base},"url":"https://example.com/a/b","user_agent":`), 0)

  for (const changed of [
    `{${base},"referrer":null}`,
    `{${base},"unknown":1}`,
    `{${base},"vitals":{"lcp":1,"xyz":2}}`,
    `{${base},"timestamp":"2026-11-22T11:59:00Z"}`,
    `{${base},"title":"${'t'.repeat(3000)}"}`,
  ]) t.equal(logged(changed).added, null, changed.slice(0, 80))
})

t.test("the client's country is added to the body's bytes like the other added members", async (t) => {
  const body = Buffer.from(`{${base},"url":"https://example.com/a"}`)
  const r = validateEvent(JSON.parse(body.toString()), { ...ctx, clientCountry: () => 'US' })
  if (r.kind !== 'accept') throw new Error('not accepted')
  t.same(r.added, ['user_agent', 'path', 'ts', 'received_at', 'country'])
  const record = JSON.parse(loggedBytes(body, r.event, r.added).toString()) as Record<string, unknown>
  t.equal(record.country, 'US')
  t.same(record, JSON.parse(JSON.stringify(r.event)))
})

t.test('a byte order mark and surrounding blanks are not logged', async (t) => {
  const text = `{${base}}\r\n`
  const { bytes, event } = logged(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))
  t.equal(bytes[0], 0x7b)
  t.same(JSON.parse(bytes.toString()), JSON.parse(JSON.stringify(event)))
})

t.test('bytes that do not end the object with a brace are serialized instead', async (t) => {
  const event = { type: 'pageview', site_id: 's1', session_id: 'x', ts: 1, received_at: 1 } as never
  const bytes = loggedBytes(Buffer.from('not json'), event, ['ts'])
  t.same(JSON.parse(bytes.toString()), event)
})

t.test("a batch's events are logged from their own bytes in the body", async (t) => {
  const text = `[{${base},"url":"https://example.com/a"} , {${base},"unknown":true},\n{${base},"screen":{"width":3}}]`
  const body = Buffer.from(text)
  const parsed = parseJsonBody(body)
  if (!parsed.ok) throw new Error(parsed.error)
  const result = validateBatch(parsed.value, ctx)
  if (!result.ok) throw new Error(result.error)
  const ranges = objectElementRanges(body)!
  const kept = result.results.map((r, i) => {
    const bytes = loggedBytes(body.subarray(ranges[2 * i], ranges[2 * i + 1]), r.event, r.kind === 'accept' ? r.added : null)
    t.same(JSON.parse(bytes.toString()), JSON.parse(JSON.stringify(r.event)), `event ${i}`)
    return r.kind === 'accept' && r.added !== null
  })
  t.same(kept, [true, false, true], 'only the event whose unknown field was dropped is serialized again')
})
