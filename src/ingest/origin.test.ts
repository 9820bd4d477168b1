import t from 'tap'
import { normalizeDomain, originAllowed } from './origin.js'

t.test('the domain itself and its subdomains', async (t) => {
  t.ok(originAllowed('https://example.com', 'example.com'))
  t.ok(originAllowed('http://example.com', 'example.com'))
  t.ok(originAllowed('https://shop.example.com', 'example.com'))
  t.ok(originAllowed('https://a.b.shop.example.com', 'example.com'))
  t.ok(originAllowed('https://example.com:8443', 'example.com'), 'any port')
  t.ok(originAllowed('https://Shop.EXAMPLE.com', 'example.com'), 'hosts are case-insensitive')
  t.ok(originAllowed('https://shop.example.com', 'Example.COM'))
})

t.test('other hosts', async (t) => {
  t.notOk(originAllowed('https://badexample.com', 'example.com'), 'a suffix is not a subdomain')
  t.notOk(originAllowed('https://example.com.evil.net', 'example.com'))
  t.notOk(originAllowed('https://other.org', 'example.com'))
  t.notOk(originAllowed('https://com', 'example.com'), 'a parent is not allowed')
  t.notOk(originAllowed('https://example.com', 'shop.example.com'), 'nor the parent of a subdomain site')
})

t.test('null and malformed origins are refused', async (t) => {
  for (const origin of ['null', 'example.com', 'not a url', 'https://', 'file:///tmp/x.html', '://example.com']) {
    t.notOk(originAllowed(origin, 'example.com'), origin)
  }
})

t.test('domains written the way people paste them', async (t) => {
  t.equal(normalizeDomain('example.com'), 'example.com')
  t.equal(normalizeDomain(' Example.com '), 'example.com')
  t.equal(normalizeDomain('https://example.com/'), 'example.com')
  t.equal(normalizeDomain('example.com:443'), 'example.com')
  t.equal(normalizeDomain('example.com.'), 'example.com')
  t.equal(normalizeDomain('bücher.de'), 'xn--bcher-kva.de')
  t.ok(originAllowed('https://www.xn--bcher-kva.de', 'bücher.de'), 'IDN domain against a punycode Origin')
  t.equal(normalizeDomain('exa mple'), undefined)
  t.notOk(originAllowed('https://example.com', 'exa mple'), 'an unusable domain refuses every Origin')
})

t.test('many distinct domains do not grow memory without bound, and answers stay right', async (t) => {
  for (let i = 0; i < 10_050; i++) normalizeDomain(`site${i}.example.org`)
  t.equal(normalizeDomain('site3.example.org'), 'site3.example.org')
  t.ok(originAllowed('https://www.site10049.example.org', 'site10049.example.org'))
})

t.test('many distinct origins: remembered answers stay right', async (t) => {
  for (let i = 0; i < 1100; i++) originAllowed(`https://host${i}.example.com`, 'example.com')
  t.ok(originAllowed('https://host5.example.com', 'example.com'))
  t.notOk(originAllowed('https://host5.example.net', 'example.com'))
  t.notOk(originAllowed('garbage', 'example.com'))
  t.notOk(originAllowed('garbage', 'example.com'), 'a remembered refusal')
})
