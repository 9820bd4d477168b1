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
