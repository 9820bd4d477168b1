import t from 'tap'
import { pathFromUrl } from './derive-path.js'

t.test('pathname of an absolute URL', async (t) => {
  t.equal(pathFromUrl('https://example.com/pricing?plan=pro#top'), '/pricing')
  t.equal(pathFromUrl('https://example.com'), '/')
  t.equal(pathFromUrl('https://example.com/blog/a/'), '/blog/a/', 'trailing slash kept: normalization comes later')
  t.equal(pathFromUrl('https://example.com/caf%C3%A9'), '/caf%C3%A9')
  t.equal(pathFromUrl('https://example.com/café'), '/caf%C3%A9', 'URL percent-encodes')
})

t.test('a URL that is already a path', async (t) => {
  t.equal(pathFromUrl('/docs/intro?x=1'), '/docs/intro')
  t.equal(pathFromUrl('/docs#a?b'), '/docs')
  t.equal(pathFromUrl('/'), '/')
})

t.test('no path to take', async (t) => {
  t.equal(pathFromUrl('mailto:someone@example.com'), undefined)
  t.equal(pathFromUrl('pricing'), undefined)
  t.equal(pathFromUrl(''), undefined)
})

t.test('a path lengthened by percent-encoding still fits the path limit', async (t) => {
  const path = pathFromUrl('https://example.com/' + 'é'.repeat(2000))!
  t.equal(path.length, 2048)
  t.ok(path.startsWith('/%C3%A9'))
})
