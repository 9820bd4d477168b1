import t from 'tap'
import { normalizePath, parsePattern, MAX_PATTERN_LENGTH } from './path-pattern.js'

function matcher(pattern: string): (path: string) => boolean {
  const p = parsePattern(pattern)
  if (!p.ok) throw new Error(p.error)
  return p.match
}

t.test('normalizePath', async (t) => {
  const cases: [string, string][] = [
    ['/pricing/', '/pricing'],
    ['/pricing///', '/pricing'],
    ['/', '/'],
    ['//', '/'],
    ['', '/'],
    ['/a/b?x=1', '/a/b'],
    ['/a/b/?x=1#top', '/a/b'],
    ['/a#frag?not-a-query', '/a'],
    ['?only=query', '/'],
    ['#only', '/'],
    ['/caf%C3%A9/', '/caf%C3%A9'],
    ['/Case/Kept', '/Case/Kept'],
  ]
  for (const [input, want] of cases) t.equal(normalizePath(input), want, JSON.stringify(input))
})

t.test('the examples of docs/api.md §4', async (t) => {
  const blog = matcher('/blog/*')
  t.ok(blog('/blog/a'))
  t.notOk(blog('/blog'))
  t.notOk(blog('/blog/'))
  t.notOk(blog('/blog/a/b'))
  const deep = matcher('/blog/**')
  t.ok(deep('/blog/a'))
  t.ok(deep('/blog/a/b/c'))
  t.notOk(deep('/blog'))
  t.notOk(deep('/blogx/a'))
  const intro = matcher('/docs/**/intro')
  t.ok(intro('/docs/x/intro'))
  t.ok(intro('/docs/x/y/intro'))
  t.notOk(intro('/docs/intro'))
  t.notOk(intro('/docs/x/intro/more'))
  const pricing = parsePattern('/pricing/')
  t.ok(pricing.ok && pricing.pattern === '/pricing' && pricing.match('/pricing'))
  const root = parsePattern('/')
  t.ok(root.ok && root.pattern === '/' && root.match('/') && !root.match('/a'))
})

t.test('literal, anchored, case-sensitive', async (t) => {
  const m = matcher('/a.b+(c)[d]$^|\\e{2}')
  t.ok(m('/a.b+(c)[d]$^|\\e{2}'), 'regex metacharacters are literal')
  t.notOk(m('/aXb+(c)[d]$^|\\e{2}'))
  const p = matcher('/Pricing')
  t.notOk(p('/pricing'))
  t.notOk(p('/Pricing/x'))
  t.notOk(p('/x/Pricing'))
  const mid = matcher('/shop/*/checkout')
  t.ok(mid('/shop/cart-1/checkout'))
  t.notOk(mid('/shop//checkout'), '* needs at least one character')
  t.notOk(mid('/shop/a/b/checkout'))
  const partial = matcher('/p/item-*')
  t.ok(partial('/p/item-42'))
  t.notOk(partial('/p/item-'))
  t.notOk(partial('/p/item-4/2'))
  const lead = matcher('/**/end')
  t.ok(lead('/a/end'))
  t.ok(lead('/a/b/end'))
  t.notOk(lead('/end'))
  const two = matcher('/*/x/*')
  t.ok(two('/a/x/b'))
  t.notOk(two('/a/x/b/c'))
  t.notOk(two('/a/b/x/c'))
  const nl = matcher('/a/**')
  t.ok(nl('/a/line\nbreak'), '** matches any character')
})

t.test('invalid patterns name match_path', async (t) => {
  for (const bad of ['', 'blog', ' /blog', '/blog/***', '/a/****/b', '/' + 'x'.repeat(MAX_PATTERN_LENGTH)]) {
    const p = parsePattern(bad)
    t.notOk(p.ok, JSON.stringify(bad.slice(0, 20)))
    if (!p.ok) t.match(p.error, /match_path/)
  }
  t.match((parsePattern('/a/***') as { error: string }).error, /\*\*\*/)
})

/** Reference semantics: a RegExp, safe on the small inputs used here. */
function reference(pattern: string): RegExp {
  const src = pattern
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.+' : part === '*' ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('')
  return new RegExp('^' + src + '$', 's')
}

t.test('agrees with a RegExp reference on random patterns and paths', async (t) => {
  let seed = 12345
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    return (seed >>> 8) % n
  }
  const pieces = ['/', 'a', 'b', '*', '**', '/a', 'ab']
  const chars = ['/', 'a', 'b']
  let checked = 0
  let matched = 0
  let mismatches = 0
  for (let i = 0; i < 3000; i++) {
    let pattern = '/'
    for (let j = rand(5); j >= 0; j--) pattern += pieces[rand(pieces.length)]
    const parsed = parsePattern(pattern)
    if (!parsed.ok) continue
    const re = reference(parsed.pattern)
    for (let k = 0; k < 20; k++) {
      let path = '/'
      for (let j = rand(8); j >= 0; j--) path += chars[rand(chars.length)]
      path = normalizePath(path)
      const want = re.test(path)
      if (parsed.match(path) !== want) mismatches++
      if (want) matched++
      checked++
    }
  }
  t.equal(mismatches, 0, `${checked} checks, ${matched} matches`)
  t.ok(matched > 1000, 'the sample exercises matches, not only misses')
})

// a backtracking matcher takes minutes on these inputs; a linear one finishes long before the deadline
t.test('many wildcards on long paths end (no backtracking blow-up)', { timeout: 30_000 }, async (t) => {
  const m = matcher('/**/**/**/**/**/**/x')
  const pathological = '/' + 'a/'.repeat(1000) + 'y'
  const segs = matcher('/*a*a*a*a*a*b')
  const longSegment = '/' + 'a'.repeat(2000)
  t.notOk(m(pathological))
  t.notOk(segs(longSegment))
  t.ok(m('/' + 'a/'.repeat(1000) + 'x'))
  t.ok(segs(longSegment + 'b'))
})
