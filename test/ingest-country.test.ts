// docs/api.md §1 — an event without `country` gets its client's, looked up in the packaged database:
// the connection's peer, or the client X-Forwarded-For names when the peer is a trusted proxy. The
// body's country wins; a malformed one is refused naming `country`; the address is never stored.
// The logged records are read from the embedded log once the server has stopped.
import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog, readEvent } from '../dist/log/index.js'
import {
  createSite, filesHolding, namesField, pageview, postEvent, startServer, uid, type Server,
} from './helpers/index.js'

type Logged = Record<string, unknown>

/** every record of the events topic, parsed; stops the server first (the log is its alone) */
async function loggedEvents(server: Server): Promise<Logged[]> {
  await server.stop()
  const log = await EmbeddedLog.open({ dir: join(server.dataDir, 'log') })
  try {
    const events: Logged[] = []
    // GOALPOST_PARTITIONS defaults to 4
    for (let partition = 0; partition < 4; partition++) {
      for (const r of await log.read('events', partition, 0, 10_000)) events.push(readEvent(r.value).toEvent())
    }
    return events
  } finally {
    await log.close()
  }
}

const bySession = (events: Logged[]) => new Map(events.map((e) => [e.session_id as string, e]))

if (process.env.GOALPOST_TEST_LOG === 'kafka') {
  t.skip('reads the records from the embedded log')
} else {
  t.test('behind a trusted proxy: the forwarded client\'s country; the body\'s wins; a batch shares its request\'s', async (t) => {
    const server = await startServer({ t, env: { GOALPOST_TRUST_PROXY: '127.0.0.1,::1' } })
    const site = (await createSite(server)).site_id
    const s = { us: uid('us'), nl: uid('nl'), v6: uid('v6'), body: uid('body'), local: uid('local'), none: uid('none') }
    const beacon = (session: string, forwardedFor: string, extra = {}) =>
      postEvent(server, pageview(site, session, '/', extra), { 'x-forwarded-for': forwardedFor })
    const replies = [
      await beacon(s.us, '8.8.8.8'),
      await beacon(s.nl, '203.0.113.7, 193.0.6.139', {}), // the client is the rightmost untrusted hop
      await beacon(s.v6, '2001:4860:4860::8888'),
      await beacon(s.body, '8.8.8.8', { country: 'DE' }),
      await beacon(s.local, '192.168.1.20'),
      await postEvent(server, pageview(site, s.none, '/', { country: null })),
    ]
    for (const r of replies) t.equal(r.status, 202, r.text)

    const batch = { own: uid('batch-own'), shared: uid('batch-shared'), second: uid('batch-second') }
    const reply = await server.request('POST', '/api/events', {
      token: server.adminToken,
      headers: { 'x-forwarded-for': '193.0.6.139' },
      body: [pageview(site, batch.shared, '/b'), pageview(site, batch.own, '/b', { country: 'FR' }), pageview(site, batch.second, '/b')],
    })
    t.equal(reply.status, 202, reply.text)

    const logged = bySession(await loggedEvents(server))
    t.equal(logged.get(s.us)?.country, 'US', 'X-Forwarded-For: 8.8.8.8')
    t.equal(logged.get(s.nl)?.country, 'NL', 'the rightmost hop that is not a trusted proxy')
    t.equal(logged.get(s.v6)?.country, 'US', 'an IPv6 client')
    t.equal(logged.get(s.body)?.country, 'DE', "the body's country wins over the lookup")
    t.notOk(logged.get(s.local) && 'country' in logged.get(s.local)!, 'a private address: no country')
    t.notOk(logged.get(s.none) && 'country' in logged.get(s.none)!, 'the proxy itself on loopback: no country')
    t.equal(logged.get(batch.shared)?.country, 'NL', "a batch's event gets its request's client country")
    t.equal(logged.get(batch.second)?.country, 'NL')
    t.equal(logged.get(batch.own)?.country, 'FR', 'unless it names its own')
    t.equal(logged.size, 9, 'every event logged')

    for (const e of logged.values()) {
      const text = JSON.stringify(e)
      t.notMatch(text, /8\.8\.8\.8|193\.0\.6\.139|2001:4860|192\.168\.1\.20|127\.0\.0\.1/, `no address in ${e.session_id as string}`)
    }
    for (const address of ['8.8.8.8', '193.0.6.139', '2001:4860:4860::8888']) {
      t.same(await filesHolding(server.dataDir, address), [], `${address} is nowhere in the data directory`)
    }
  })

  t.test("an untrusted peer's X-Forwarded-For is ignored: the peer is the client", async (t) => {
    const server = await startServer({ t })
    const site = (await createSite(server)).site_id
    const session = uid('forged')
    t.equal((await postEvent(server, pageview(site, session, '/'), { 'x-forwarded-for': '8.8.8.8' })).status, 202)
    const logged = bySession(await loggedEvents(server)).get(session)
    t.ok(logged, 'logged')
    t.notOk(logged && 'country' in logged, 'the loopback peer has no country, whatever the header says')
  })

  t.test('GOALPOST_COUNTRY_LOOKUP=false: only the countries bodies name', async (t) => {
    const server = await startServer({ t, env: { GOALPOST_TRUST_PROXY: '127.0.0.1,::1', GOALPOST_COUNTRY_LOOKUP: 'false' } })
    const site = (await createSite(server)).site_id
    const looked = uid('off')
    const named = uid('named')
    t.equal((await postEvent(server, pageview(site, looked, '/'), { 'x-forwarded-for': '8.8.8.8' })).status, 202)
    t.equal((await postEvent(server, pageview(site, named, '/', { country: 'JP' }), { 'x-forwarded-for': '8.8.8.8' })).status, 202)
    const logged = bySession(await loggedEvents(server))
    t.notOk('country' in (logged.get(looked) ?? {}), 'not looked up')
    t.equal(logged.get(named)?.country, 'JP')
  })
}

t.test('a country that is not two upper-case letters: 400 naming country', async (t) => {
  const server = await startServer({ t })
  const site = (await createSite(server)).site_id
  for (const country of ['de', 'DEU', 5, '']) {
    namesField(t, await postEvent(server, pageview(site, uid('bad'), '/', { country })), 'country', 400, JSON.stringify(country))
  }
  const reply = await server.request('POST', '/api/events', {
    token: server.adminToken,
    body: [pageview(site, uid('ok'), '/'), pageview(site, uid('bad'), '/', { country: 'us' })],
  })
  namesField(t, reply, 'country', 400, 'in a batch')
  t.match(reply.json, { errors: [{ index: 1, error: /^country / }] })
})
