import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import { EVENT_TYPES, eventKey, type LoggedEvent } from '../schema/index.js'
import { hash64, initHash } from '../sketch/index.js'
import { EVENT_RECORD_VERSION, EventReaders, EventRecord, encodeEvent, eventLogRecord, readEvent, readEventAt } from './event-record.js'

await initHash()

const T0 = Date.UTC(2026, 10, 27, 9, 30)

const minimal = (): LoggedEvent => ({ type: 'pageview', site_id: 'shop', session_id: 's1', ts: T0, received_at: T0 + 5 })

/** every field the schema has, with text that is not ASCII and a lone surrogate's replacement */
const full = (): LoggedEvent => ({
  type: 'custom_event', site_id: 'shop.example', session_id: 'k3j9x0aq7d2m', visitor_id: 'v-8c1f0e', user_id: 'user 42 ✓',
  url: 'https://shop.example/kaffee/grüße?q=1', path: '/kaffee/grüße', hostname: 'shop.example', title: 'Grüße — 咖啡 🍵',
  referrer: 'https://www.google.com/', language: 'de-DE',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  screen: { width: 1920, height: 1080, viewport_width: 1903, viewport_height: 961, pixel_ratio: 2.625 },
  utm: { source: 'newsletter', medium: 'email', campaign: 'Frühling', term: '', content: 'b' },
  ad_click_ids: { gclid: 'abc', 'odd "key"\n': 'x' }, duration: 1203.5, event_name: 'signup',
  properties: { plan: 'pro', seats: 3, trial: false, coupon: null, 'ключ': 'значение' },
  vitals: { lcp: 2100.5, fid: 12, cls: 0.01, fcp: 900, ttfb: 120, inp: 80 },
  error_name: 'TypeError', error_message: 'x is undefined', error_stack: 'at f (a.js:1:2)\nat g (b.js:3:4)', provider: 'stripe',
  revenue: { amount: '19.9900', currency: 'EUR' }, event_id: 'ev-1', country: 'DE', ts: T0 - 86_400_000, received_at: T0,
})

const hashOf = (e: LoggedEvent) => hash64(eventKey(e.site_id, e.session_id))

t.test('a record reads back as the event it was encoded from, field by field and whole', async (t) => {
  for (const e of [minimal(), full(), { ...full(), revenue: { amount: 19.99, currency: 'USD' } }, { ...minimal(), screen: {}, utm: {}, vitals: { cls: 0 } }]) {
    const h = hashOf(e)
    const bytes = encodeEvent(e, h.hi, h.lo)
    t.equal(bytes[0], EVENT_RECORD_VERSION)
    const r = new EventRecord(bytes)
    t.same(r.toEvent(), e, `${e.type} with ${Object.keys(e).length} fields`)
    t.strictSame([r.hashHi, r.hashLo], [h.hi | 0, h.lo | 0], 'the session hash travels in the record (as int32 halves)')
    for (const key of Object.keys(e) as (keyof LoggedEvent)[]) t.same(r[key], e[key], key)
    t.equal(r.title, e.title, 'asked twice, a field reads the same')
  }
})

t.test('every event type has its code, and the absent fields read as undefined', async (t) => {
  for (const type of EVENT_TYPES) {
    const e = { ...minimal(), type }
    const r = readEvent(encodeEvent(e, 1, 2))
    t.equal(r.type, type)
    t.equal(r.path, undefined)
    t.equal(r.screen, undefined)
    t.equal(r.revenue, undefined)
    t.equal(r.properties, undefined)
  }
})

t.test('a record read from a slice of a larger buffer, at an odd offset, reads the same', async (t) => {
  const e = full()
  const bytes = encodeEvent(e, 7, 9)
  const big = Buffer.alloc(bytes.length + 101, 0xaa)
  bytes.copy(big, 37)
  t.same(readEvent(big.subarray(37, 37 + bytes.length)).toEvent(), e)
})

t.test('the live fold gets a record primed from the validated event: it reads what decoding would', async (t) => {
  const e = full()
  const key = eventKey(e.site_id, e.session_id)
  const logged = eventLogRecord(e)
  const live = logged.decoded
  t.equal(logged.key, key)
  t.equal(logged.value, live.bytes)
  t.equal(logged.timestamp, e.ts)
  const decoded = new EventRecord(Buffer.from(live.bytes))
  t.same(live.toEvent(), decoded.toEvent())
  t.equal(live.hashHi, hash64(key).hi | 0)
  t.equal(live.hashLo, hash64(key).lo | 0)
})

t.test('JSON text (earlier records, foreign producers) is read into the same record', async (t) => {
  const e = full()
  const fromJson = readEvent(Buffer.from(JSON.stringify(e)))
  t.same(fromJson.toEvent(), e)
  const h = hashOf(e)
  t.strictSame([fromJson.hashHi, fromJson.hashLo], [h.hi | 0, h.lo | 0])
  const withNulls = readEvent(Buffer.from(JSON.stringify({ ...minimal(), referrer: null, path: '/a' })))
  t.equal(withNulls.referrer, undefined, 'a null field is an absent one')
  t.equal(withNulls.path, '/a')
})

t.test('what is not a record is refused with an error that says why', async (t) => {
  const good = encodeEvent(full(), 1, 2)
  const newer = Buffer.from(good)
  newer[0] = 2
  t.throws(() => readEvent(newer), /event record version 2 is not read by this build/)
  const badType = Buffer.from(good)
  badType[1] = 200
  t.throws(() => readEvent(badType), /event record type 200 is unknown/)
  t.throws(() => readEvent(good.subarray(0, good.length - 3)), /says it holds/)
  t.throws(() => readEvent(Buffer.from([1, 0, 0])), /too short/)
  t.throws(() => readEvent(Buffer.from('{"type":"pageview"')), SyntaxError)
  t.throws(() => readEvent(Buffer.from('{"type":"pageview","site_id":"a","ts":1,"received_at":1}')), /site_id and session_id/)
  t.throws(() => readEvent(Buffer.from('{"type":"nope","site_id":"a","session_id":"b","ts":1,"received_at":1}')), /cannot hold the event type "nope"/)
})

t.test('the longest texts the limits allow fit; an event bigger than the scratch buffer is encoded whole', async (t) => {
  const long = '😀'.repeat(1024) // 2048 UTF-16 units, 4096 bytes
  const e: LoggedEvent = {
    ...full(), url: long, title: long, referrer: long, user_agent: long, error_message: long,
    ad_click_ids: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`id${i}`, 'x'.repeat(250)])),
  }
  const r = readEvent(encodeEvent(e, 3, 4))
  t.ok(r.bytes.length > 100_000)
  t.same(r.toEvent(), e)
  t.same(readEvent(encodeEvent(full(), 3, 4)).toEvent(), full(), 'and the next small one after it')
})

t.test('records encoded one after another keep their bytes: a later record never writes over an earlier one', async (t) => {
  // enough to fill several slabs, with a large event now and then that takes a buffer of its own
  const events = Array.from({ length: 6000 }, (_, i): LoggedEvent => ({
    ...full(), session_id: `s-${i}`, title: i % 997 === 0 ? 'ü'.repeat(2048) : `page ${i}`,
    ad_click_ids: i % 1499 === 0 ? Object.fromEntries(Array.from({ length: 300 }, (_, k) => [`k${k}`, 'y'.repeat(200)])) : { gclid: `g${i}` },
  }))
  const records = events.map((e, i) => encodeEvent(e, i, i + 1))
  let wrong = 0
  records.forEach((bytes, i) => {
    const r = readEvent(bytes)
    if (!isDeepStrictEqual(r.toEvent(), events[i]) || r.hashHi !== i || r.hashLo !== i + 1) wrong++
  })
  t.equal(wrong, 0)
})

t.test('a text holding a lone surrogate reads back as it was sent, not as U+FFFD', async (t) => {
  const e: LoggedEvent = {
    ...full(), path: '/a\ud800b', title: 'x\udfff', referrer: 'https://r.example/\ud83d', utm: { source: '\ud800' },
    revenue: { amount: '1', currency: 'EUR' }, user_agent: '\udc00'.repeat(40),
  }
  const r = readEvent(encodeEvent(e, 1, 2))
  t.same(r.toEvent(), e)
  t.equal(r.path, '/a\ud800b')
  t.equal(r.utm?.source, '\ud800')
  t.equal(readEvent(Buffer.from(r.bytes)).path, eventLogRecord(e).decoded.path, 'the live fold and a replay see the same path')
  const paired = readEvent(encodeEvent({ ...minimal(), path: '/🍵' }, 1, 2))
  t.equal(paired.path, '/🍵', 'a pair is UTF-8 as ever')
  t.ok(paired.bytes.includes(Buffer.from('/🍵')))
})

t.test('screenWidth reads what screen.width does, with or without a screen or its width, before and after screen', async (t) => {
  const screens = [undefined, { width: 1920, height: 1080 }, { height: 800, pixel_ratio: 2 }, { width: 390.5 }, { width: 0 }]
  for (const screen of screens) {
    const e: LoggedEvent = { ...minimal(), ...(screen ? { screen } : {}), user_agent: 'ua' }
    const r = readEvent(encodeEvent(e, 1, 2))
    t.equal(r.screenWidth, screen?.width, `first, ${JSON.stringify(screen)}`)
    t.same(r.screen, screen)
    t.equal(r.screenWidth, screen?.width, 'after screen was read')
    t.equal(r.user_agent, 'ua', 'the fields after it still read')
  }
})

t.test('texts that repeat read as themselves from the text cache, whatever shares its slots', async (t) => {
  // more distinct texts than the cache has slots, read in turns: slots are taken over again and again
  const texts: string[] = []
  for (let i = 0; i < 6000; i++) texts.push(`/p/${i.toString(36)}`)
  // same length and char codes as the UTF-8 bytes of the other (Ã© is C3 A9 read as Latin-1)
  texts.push('/\u00e9', '/\u00c3\u00a9', 'caf\u00e9', 'caf\u00c3\u00a9', '/🍵', '/\u00f0\u009f\u008d\u00b5', '')
  texts.push('x'.repeat(256), 'x'.repeat(257), 'y'.repeat(255) + '\u00e9')
  let wrong = 0
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < texts.length; i++) {
      const text = texts[(i * 7919 + round) % texts.length]
      const other = texts[(i * 104729 + 1) % texts.length]
      const r = readEvent(encodeEvent({
        ...minimal(), site_id: other, path: text, referrer: other, hostname: text, event_name: other, user_agent: text, country: other,
        utm: { source: text, campaign: other },
      }, 1, 2))
      if (r.site_id !== other || r.path !== text || r.referrer !== other || r.hostname !== text || r.event_name !== other || r.user_agent !== text ||
        r.country !== other || r.utm?.source !== text || r.utm?.campaign !== other) wrong++
    }
  }
  t.equal(wrong, 0)
  // a text beyond ASCII next to the one its UTF-8 bytes spell when read as Latin-1, each read right
  // after the other: a cache that held texts beyond ASCII gives one for the other when both fall in
  // one slot (about one pair in 4096 do)
  let mixed = 0
  for (let i = 0; i < 40_000; i++) {
    const plain = `/${i.toString(36)}/caf\u00e9`
    const latin = `/${i.toString(36)}/caf\u00c3\u00a9`
    for (const [a, b] of [[latin, plain], [plain, latin]]) {
      if (readEvent(encodeEvent({ ...minimal(), path: a }, 1, 2)).path !== a) mixed++
      if (readEvent(encodeEvent({ ...minimal(), path: b }, 1, 2)).path !== b) mixed++
    }
  }
  t.equal(mixed, 0, 'texts beyond ASCII are never taken for one another')
})

t.test('a reader reused for another record reads only that record, after a record it refused too', async (t) => {
  const events = [full(), minimal(), { ...full(), revenue: { amount: 19.99, currency: 'USD' }, path: '/b' }, { ...minimal(), type: 'custom_event' as const, event_name: 'x' }]
  const bytes = events.map((e) => {
    const h = hashOf(e)
    return Buffer.from(encodeEvent(e, h.hi, h.lo))
  })
  const reader = new EventRecord(bytes[0])
  // every field read, so that each is kept by the reader before it moves on
  t.same(reader.toEvent(), events[0])
  for (let i = 1; i < events.length; i++) {
    t.equal(reader.reuse(bytes[i]), reader, 'the same object')
    t.same(reader.toEvent(), events[i], `record ${i} whole`)
    t.strictSame([reader.hashHi, reader.hashLo], [hashOf(events[i]).hi | 0, hashOf(events[i]).lo | 0])
    t.equal(reader.path, events[i].path, 'no field of an earlier record is left')
  }
  const bad = Buffer.from(bytes[0])
  bad[0] = 9
  t.throws(() => reader.reuse(bad), /version 9/)
  t.equal(reader.path, undefined, 'a refused record leaves a reader that reads nothing')
  const short = bytes[0].subarray(0, bytes[0].length - 3)
  t.throws(() => reader.reuse(short), /says it holds/)
  t.same(reader.reuse(bytes[2]).toEvent(), events[2], 'and it reads the next record whole')
})

t.test('readers kept by index: made once, reused for the next batch; JSON read into them too', async (t) => {
  const readers = new EventReaders()
  const set = readers.take()
  const a = minimal()
  const b = { ...minimal(), session_id: 's2', path: '/x' }
  const first = readEventAt(set, 0, Buffer.from(eventLogRecord(a).value))
  t.equal(set[0], first)
  t.equal(first.session_id, 's1')
  readers.give(set)
  const again = readers.take()
  t.equal(again, set, 'the set given back is taken again')
  t.equal(readers.take() === set, false, 'a second fold at once takes a set of its own')
  const json = Buffer.from(JSON.stringify(b))
  const second = readEventAt(again, 0, json)
  t.equal(second, first, 'the reader is reused for a JSON value')
  t.same(second.toEvent(), b)
  t.throws(() => readEventAt(again, 1, Buffer.from([7, 0, 0])), /too short/)
  t.equal(again.length, 1, 'a value refused leaves no reader behind')
})
