import t from 'tap'
import type { LoggedEvent } from '../schema/index.js'
import { GROUP_DIMENSIONS, attributeValues, groupOf, referrerHost, valueInCombination } from './session-attributes.js'
import { SessionTable } from './session-table.js'

t.test('the referrer host: lower-cased, no www., not the page\'s own host', async (t) => {
  t.equal(referrerHost('https://WWW.Google.com/search?q=x', 'shop.example'), 'google.com')
  t.equal(referrerHost('https://news.example:8443/a#b', undefined), 'news.example', 'the port goes')
  t.equal(referrerHost('https://user:pw@news.example/', undefined), 'news.example', 'and credentials')
  t.equal(referrerHost('android-app://com.slack/', undefined), 'com.slack')
  t.equal(referrerHost('news.example/path', undefined), 'news.example', 'no scheme')
  t.equal(referrerHost('http://[::1]:80/x', undefined), '[::1]')
  t.equal(referrerHost('https://www.shop.example/cart', 'shop.example'), null, 'the site itself')
  t.equal(referrerHost('https://shop.example/cart', 'WWW.Shop.Example'), null, 'compared the same way')
  t.equal(referrerHost('https://shop.example/cart', undefined, 'https://www.shop.example/pricing'), null, 'the url names the host when hostname is absent')
  t.equal(referrerHost('https://blog.shop.example/', 'shop.example'), 'blog.shop.example', 'a subdomain is another host')
  t.equal(referrerHost('', 'shop.example'), null)
  t.equal(referrerHost(undefined, 'shop.example'), null)
  t.equal(referrerHost('https:///nothing', undefined), null)
})

t.test('the referrer host found in place agrees with lower-casing strings, whatever the texts', async (t) => {
  // the host taken as strings: lower-cased, then compared (how hosts beyond ASCII are still taken)
  const hostOf = (url: string): string => {
    let start = url.indexOf('//')
    start = start < 0 ? 0 : start + 2
    const stop = url.slice(start).search(/[/?#]/)
    let host = url.slice(start, stop < 0 ? url.length : start + stop)
    host = host.slice(host.lastIndexOf('@') + 1)
    const colon = host.lastIndexOf(':')
    if (colon >= 0 && colon > host.lastIndexOf(']')) host = host.slice(0, colon)
    return bare(host)
  }
  const bare = (h: string): string => (h.toLowerCase().startsWith('www.') ? h.toLowerCase().slice(4) : h.toLowerCase())
  const expected = (referrer: string, hostname: string | undefined, url: string | undefined): string | null => {
    if (!referrer) return null
    const host = hostOf(referrer)
    if (host === '') return null
    const own = hostname ? bare(hostname) : url ? hostOf(url) : ''
    return own === host ? null : host
  }
  // URLs built of parts that often agree, and texts of parts in any order
  const schemes = ['', 'https://', 'http://', '//', 'android-app://', 'x:/']
  const creds = ['', '', 'user:pw@', '@', 'a@b@']
  const wwws = ['', '', 'www.', 'WWW.', 'wWw.', 'ww.', 'www']
  const hosts = ['shop.example', 'Shop.Example', 'SHOP.EXAMPLE', 'shop.exampl', '[::1]', 'Ünï.example', 'İ.example', 'straße.example', '', ':']
  const ports = ['', '', ':8443', ':', ']']
  const paths = ['', '/', '/cart', '?q=a:b@c', '#x', '/a:b@c']
  let seed = 7
  const pick = (xs: readonly string[]): string => xs[(seed = (seed * 1103515245 + 12345) % 2147483648) % xs.length]
  const url = (): string => pick(schemes) + pick(creds) + pick(wwws) + pick(hosts) + pick(ports) + pick(paths)
  const all = [...schemes, ...creds, ...wwws, ...hosts, ...ports, ...paths]
  const text = (): string => Array.from({ length: 1 + (seed % 5) }, () => pick(all)).join('')
  let checked = 0
  let same = 0
  for (let i = 0; i < 20_000; i++) {
    const referrer = i % 7 === 0 ? text() : url()
    const hostname = i % 3 === 0 ? undefined : pick(wwws) + pick(hosts)
    const pageUrl = i % 4 === 0 ? undefined : i % 5 === 0 ? text() : url()
    const want = expected(referrer, hostname, pageUrl)
    const got = referrerHost(referrer, hostname, pageUrl)
    if (got !== want) {
      t.equal(got, want, `${JSON.stringify([referrer, hostname, pageUrl])}`)
      return
    }
    checked++
    if (want === null && hostOf(referrer) !== '') same++
  }
  t.equal(checked, 20_000)
  t.ok(same > 1000, `the site's own host came up (${same} times)`)
})

t.test('attribute values: source is utm_source, else the referrer host; the client described', async (t) => {
  const base = {
    entry_page: '/in', ref_host: 'google.com', utm_source: null, utm_medium: 'cpc', utm_campaign: null,
    user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    screen_width: 390, country: 'NL',
  }
  t.same(attributeValues(base, []), ['google.com', 'google.com', null, 'cpc', null, '/in', 'mobile', 'Safari', 'iOS', 'NL'])
  t.same(attributeValues({ ...base, utm_source: 'newsletter', user_agent: null, screen_width: 1500 }, []).slice(0, 9), ['newsletter', 'google.com', 'newsletter', 'cpc', null, '/in', 'desktop', null, null])
})

t.test('one attribute of a slot is the same as all of them', async (t) => {
  const table = new SessionTable()
  const e = {
    type: 'pageview', site_id: 's', session_id: 'a', ts: 1, received_at: 1, path: '/in', url: 'https://shop.example/in', referrer: 'https://www.news.example/',
    utm: { medium: 'email', campaign: 'spring' }, country: 'SE', user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  } as LoggedEvent
  const slot = table.insert(1, 2, e)
  table.fold(slot, e, '/in')
  const all = table.attributes(slot, [])
  t.same(all, ['news.example', 'news.example', null, 'email', 'spring', '/in', 'desktop', 'Firefox', 'Windows', 'SE'])
  t.same(all.map((_, d) => table.attributeAt(slot, d)), all)
})

t.test('each dimension\'s value is found in its group\'s combination', async (t) => {
  const values = ['news', 'ref.example', 'news', 'email', 'spring', '/in', 'mobile', 'Safari', null, 'SE']
  for (let d = 0; d < 10; d++) {
    const g = groupOf(d)
    t.equal(valueInCombination(d, GROUP_DIMENSIONS[g].map((i) => values[i])), values[d], `dimension ${d}`)
  }
  const direct = [null, 'ref.example', null, null, null, null, null, null, null, null]
  t.equal(valueInCombination(0, GROUP_DIMENSIONS[0].map((i) => direct[i])), 'ref.example', 'source falls back to the referrer')
})
