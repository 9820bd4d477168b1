import t from 'tap'
import { pageAsset } from './dashboard-routes.js'

t.test('the page is revalidated on every load and carries its security headers', async (t) => {
  const page = pageAsset(Buffer.from('<!doctype html><title>Goalpost</title>'.repeat(10)))
  const plain = page.answer({ headers: {} })
  t.equal(plain.status, 200)
  t.equal(plain.headers!['Cache-Control'], 'no-cache')
  t.equal(plain.headers!['Content-Type'], 'text/html; charset=utf-8')
  t.match(plain.headers!['Content-Security-Policy'], /default-src 'self'/)
  t.equal(plain.headers!['X-Content-Type-Options'], 'nosniff')
  const again = page.answer({ headers: { 'if-none-match': plain.headers!.ETag } })
  t.equal(again.status, 304, 'unchanged: 304')
  t.equal(again.body, undefined)
})
