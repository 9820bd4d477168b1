import t from 'tap'
import { snippet } from './snippet.js'

t.test('the snippet loads script.js from this server for one site', async (t) => {
  t.equal(snippet('https://stats.example', 'shop'), '<script defer src="https://stats.example/script.js" data-site-id="shop"></script>')
  t.equal(snippet('http://127.0.0.1:8080/', 'a.b-c_d'), '<script defer src="http://127.0.0.1:8080/script.js" data-site-id="a.b-c_d"></script>', 'no double slash')
  t.notMatch(snippet('https://x.example', 'a"b<c'), /"b<c/, 'attribute values are escaped')
})
