import t from 'tap'
import { parseProxyEntry, plainAddress, TrustedProxies } from './trusted-proxies.js'

t.test('entries: addresses and CIDRs of both families; anything else names itself', async (t) => {
  t.same(parseProxyEntry('10.0.0.0/8'), { address: '10.0.0.0', prefix: 8, family: 'ipv4' })
  t.same(parseProxyEntry(' 192.168.1.10 '), { address: '192.168.1.10', prefix: 32, family: 'ipv4' })
  t.same(parseProxyEntry('fd00::/8'), { address: 'fd00::', prefix: 8, family: 'ipv6' })
  t.same(parseProxyEntry('::1'), { address: '::1', prefix: 128, family: 'ipv6' })
  for (const bad of ['localhost', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/x', '10.0.0/8', '1.2.3.4/8/9', '']) {
    t.throws(() => parseProxyEntry(bad), { message: new RegExp(`"${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`) }, `refuses ${JSON.stringify(bad)}`)
  }
})

t.test('matching by prefix, IPv4-mapped peers included', async (t) => {
  const p = new TrustedProxies(['10.0.0.0/8', '192.168.1.10', 'fd00::/8'])
  t.ok(p.trusts('10.200.3.4'))
  t.notOk(p.trusts('11.0.0.1'))
  t.ok(p.trusts('192.168.1.10'))
  t.notOk(p.trusts('192.168.1.11'))
  t.ok(p.trusts('fd12:3456::1'))
  t.notOk(p.trusts('fe80::1'))
  t.ok(p.trusts('0000:0000:0000:0000:0000:ffff:0a00:0001'), 'uWS spells a v4 peer of a dual-stack socket like this')
  t.notOk(p.trusts('not an address'))
  t.notOk(new TrustedProxies().trusts('127.0.0.1'), 'none by default')
})

t.test('the client address: X-Forwarded-For counts only from a trusted peer, read from the right', async (t) => {
  const p = new TrustedProxies(['10.0.0.0/8'])
  t.equal(p.clientAddress('203.0.113.9', '1.1.1.1'), '203.0.113.9', 'an untrusted peer is the client, whatever it claims')
  t.equal(p.clientAddress('10.0.0.2', '198.51.100.7'), '198.51.100.7', 'one trusted proxy')
  t.equal(p.clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.0.0.3'), '198.51.100.7', 'the first untrusted hop from the right; a forged left part is ignored')
  t.equal(p.clientAddress('10.0.0.2', '10.0.0.5'), '10.0.0.5', 'all trusted: the leftmost')
  t.equal(p.clientAddress('10.0.0.2', 'garbage'), '10.0.0.2', 'a hop that is no address ends the walk')
  t.equal(p.clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0001', undefined), '127.0.0.1', 'mapped peers read as IPv4')
  t.equal(new TrustedProxies().clientAddress('127.0.0.1', '9.9.9.9'), '127.0.0.1', 'nobody trusted by default')
})

t.test('HTTPS as a trusted proxy reports it', async (t) => {
  const p = new TrustedProxies(['127.0.0.1'])
  t.equal(p.forwardedHttps('127.0.0.1', 'https'), true)
  t.equal(p.forwardedHttps('127.0.0.1', 'HTTPS, http'), true, 'the first proxy saw the client')
  t.equal(p.forwardedHttps('127.0.0.1', 'http'), false)
  t.equal(p.forwardedHttps('127.0.0.2', 'https'), false, 'from an untrusted peer it means nothing')
  t.equal(p.forwardedHttps('127.0.0.1', undefined), false)
})

t.test('plain addresses', async (t) => {
  t.equal(plainAddress('::ffff:192.0.2.1'), '192.0.2.1')
  t.equal(plainAddress('0:0:0:0:0:ffff:c000:0201'), '192.0.2.1')
  t.equal(plainAddress('2001:db8::1'), '2001:db8::1')
  t.equal(plainAddress('198.51.100.7:52311'), '198.51.100.7', 'a port some proxies append')
  t.equal(plainAddress('[2001:db8::1]:443'), '2001:db8::1')
  t.equal(plainAddress('[2001:db8::1]'), '2001:db8::1')
  t.equal(new TrustedProxies(['10.0.0.0/8']).clientAddress('10.0.0.2', '198.51.100.7:52311'), '198.51.100.7')
})
