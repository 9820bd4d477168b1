import t from 'tap'
import { createRequire } from 'node:module'
import { openCountryLookup } from './country.js'

const countryOf = openCountryLookup()

// addresses whose holder and country have stood for many years: public resolvers and the RIRs' own
t.test('public addresses: their country', async (t) => {
  t.equal(countryOf('8.8.8.8'), 'US', 'Google Public DNS')
  t.equal(countryOf('9.9.9.9'), 'US', 'Quad9')
  t.equal(countryOf('193.0.6.139'), 'NL', 'RIPE NCC, Amsterdam')
  t.equal(countryOf('202.12.27.33'), 'JP', 'a root server run by WIDE, Tokyo')
  t.equal(countryOf('200.160.2.3'), 'BR', 'NIC.br')
})

t.test('IPv6, and IPv4 written as IPv6', async (t) => {
  t.equal(countryOf('2001:4860:4860::8888'), 'US', 'Google Public DNS')
  t.equal(countryOf('2001:67c:2e8:22::c100:68b'), 'NL', 'RIPE NCC')
  t.equal(countryOf('::ffff:8.8.8.8'), 'US', 'IPv4-mapped, dotted')
  t.equal(countryOf('::ffff:808:808'), 'US', 'IPv4-mapped, in hex')
  t.equal(countryOf('0:0:0:0:0:ffff:c100:68b'), 'NL', 'IPv4-mapped, written out')
  t.equal(countryOf('::FFFF:193.0.6.139'), 'NL', 'upper case')
})

t.test('loopback, private and other addresses nobody on the internet sends from: null', async (t) => {
  const local = [
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '100.64.0.1', '169.254.1.1', '0.0.0.0',
    '192.0.2.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fd12:3456::1', 'fc00::1', 'ff02::1', '2001:db8::1', '2002:c0a8:101::1', '3fff::1',
    '::ffff:192.168.1.1', '::ffff:127.0.0.1', '::ffff:7f00:1',
  ]
  // the database itself names a country for some of these (192.168.0.0/16 as AU, 2001:db8::/32 as JP)
  for (const address of local) t.equal(countryOf(address), null, address)
})

t.test('what is not an address: null, never an error', async (t) => {
  for (const text of ['', 'localhost', '8.8.8', '8.8.8.8:443', '[2001:4860:4860::8888]', '999.1.1.1', 'not an ip']) {
    t.equal(countryOf(text), null, JSON.stringify(text))
  }
})

t.test('answers stay right once the memory of recent addresses is full', async (t) => {
  for (let i = 0; i < 20_000; i++) countryOf(`11.${(i >> 8) & 255}.${i & 255}.1`)
  t.equal(countryOf('8.8.8.8'), 'US')
  t.equal(countryOf('192.168.1.1'), null)
  t.equal(countryOf('11.0.0.1'), 'US', 'a forgotten address is looked up again')
})

t.test('another database file may be named', async (t) => {
  const require = createRequire(import.meta.url)
  const ipv4Only = openCountryLookup(require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv4.mmdb'))
  t.equal(ipv4Only('8.8.8.8'), 'US')
  t.equal(ipv4Only('193.0.6.139'), 'NL')
  t.equal(ipv4Only('10.1.2.3'), null, 'private ranges stay unknown whatever the file says')
  t.throws(() => openCountryLookup('/nonexistent/countries.mmdb'), /ENOENT/, 'a file that cannot be read stops the start')
})
