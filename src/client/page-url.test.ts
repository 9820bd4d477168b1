import t from 'tap'
import { campaign, cleanUrl } from './page-url.js'

t.test('query parameters other than campaign ones are removed, and the fragment', async (t) => {
  t.equal(
    cleanUrl('https://shop.example/p?email=a%40b.c&utm_source=news&token=abc&ref=hn&source=x&gclid=G1&msclkid=M#secret', false),
    'https://shop.example/p?utm_source=news&ref=hn&source=x&gclid=G1&msclkid=M',
  )
  t.equal(cleanUrl('https://shop.example/p?token=abc', false), 'https://shop.example/p', 'no empty "?" left')
  t.equal(cleanUrl('https://shop.example/p?Utm_Medium=m&fbclid=F&gbraid=g&wbraid=w&li_fat_id=l&xyzclid=z&click=no', false),
    'https://shop.example/p?Utm_Medium=m&fbclid=F&gbraid=g&wbraid=w&li_fat_id=l&xyzclid=z')
})

t.test('keepQuery keeps the URL whole', async (t) => {
  const url = 'https://shop.example/p?email=a%40b.c&x=1#frag'
  t.equal(cleanUrl(url, true), url)
})

t.test('what is not a URL gives undefined', async (t) => {
  t.equal(cleanUrl('', false), undefined)
  t.equal(cleanUrl('not a url', false), undefined)
})

t.test('a long URL is cut to 2048 characters', async (t) => {
  t.equal(cleanUrl(`https://shop.example/${'a'.repeat(3000)}`, false)!.length, 2048)
})

t.test('campaign: utm and click ids of the query', async (t) => {
  t.same(campaign('?utm_source=news&utm_medium=mail&utm_campaign=spring&utm_term=shoes&utm_content=top&utm_other=x'),
    { utm: { source: 'news', medium: 'mail', campaign: 'spring', term: 'shoes', content: 'top' } })
  t.same(campaign('?gclid=1&gbraid=2&wbraid=3&fbclid=4&msclkid=5&ttclid=6&twclid=7&li_fat_id=8&yclid=9&q=x'),
    { ad_click_ids: { gclid: '1', gbraid: '2', wbraid: '3', fbclid: '4', msclkid: '5', ttclid: '6', twclid: '7', li_fat_id: '8', yclid: '9' } })
  t.same(campaign(''), {}, 'nothing: neither field')
  t.same(campaign('?q=1&email=x'), {})
  t.equal(campaign(`?utm_source=${'s'.repeat(300)}`).utm?.source?.length, 256, 'values cut to 256')
})
