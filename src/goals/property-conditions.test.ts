import t from 'tap'
import { canonicalConditions, checkConditions, compileConditions, describeCondition } from './property-conditions.js'

t.test('is: equals one of the values; non-strings compare as JSON text', async (t) => {
  const test = compileConditions([{ key: 'plan', op: 'is', values: ['pro', 'team'] }])
  t.ok(test({ plan: 'pro' }))
  t.ok(test({ plan: 'team', other: 1 }))
  t.notOk(test({ plan: 'Pro' }), 'case-sensitive')
  t.notOk(test({}))
  t.notOk(test(undefined))
  const json = compileConditions([{ key: 'v', op: 'is', values: ['true', '49.5', 'null'] }])
  t.ok(json({ v: true }))
  t.ok(json({ v: 49.5 }))
  t.ok(json({ v: null }))
  t.notOk(json({ v: false }))
  t.notOk(json({ v: 'x' }))
})

t.test('is_not: absent or none of the values', async (t) => {
  const test = compileConditions([{ key: 'plan', op: 'is_not', values: ['free'] }])
  t.ok(test(undefined))
  t.ok(test({}))
  t.ok(test({ plan: 'pro' }))
  t.notOk(test({ plan: 'free' }))
})

t.test('contains and exists', async (t) => {
  const contains = compileConditions([{ key: 'ref', op: 'contains', values: ['mail', 'news'] }])
  t.ok(contains({ ref: 'newsletter' }))
  t.ok(contains({ ref: 'gmail' }))
  t.notOk(contains({ ref: 'Mail' }))
  t.notOk(contains({}))
  t.ok(compileConditions([{ key: 'n', op: 'contains', values: ['.5'] }])({ n: 49.5 }), 'numbers as JSON text')
  const exists = compileConditions([{ key: 'coupon', op: 'exists' }])
  t.ok(exists({ coupon: null }), 'null included')
  t.ok(exists({ coupon: '' }))
  t.notOk(exists({}))
  t.notOk(compileConditions([{ key: 'toString', op: 'exists' }])({}), 'own keys only')
  t.notOk(exists(undefined))
})

t.test('all conditions must hold', async (t) => {
  const test = compileConditions([
    { key: 'plan', op: 'is', values: ['pro'] },
    { key: 'coupon', op: 'exists' },
  ])
  t.ok(test({ plan: 'pro', coupon: 'X' }))
  t.notOk(test({ plan: 'pro' }))
  t.notOk(test({ coupon: 'X', plan: 'team' }))
})

t.test('the canonical form ignores the order of conditions and values', async (t) => {
  const a = canonicalConditions([{ key: 'plan', op: 'is', values: ['pro', 'team'] }, { key: 'c', op: 'exists' }])
  const b = canonicalConditions([{ key: 'c', op: 'exists' }, { key: 'plan', op: 'is', values: ['team', 'pro', 'team'] }])
  t.equal(a, b)
  t.not(a, canonicalConditions([{ key: 'plan', op: 'is_not', values: ['pro', 'team'] }, { key: 'c', op: 'exists' }]))
  t.not(canonicalConditions([{ key: 'a|b', op: 'exists' }]), canonicalConditions([{ key: 'a', op: 'exists' }, { key: 'b', op: 'exists' }]))
})

t.test('values are required except for exists, where they are refused', async (t) => {
  t.equal(checkConditions([{ key: 'a', op: 'is', values: ['x'] }, { key: 'b', op: 'exists' }]), undefined)
  t.match(checkConditions([{ key: 'a', op: 'exists', values: ['x'] }]), /^match_properties\[0\]\.values /)
  t.match(checkConditions([{ key: 'a', op: 'exists' }, { key: 'b', op: 'contains' }]), /^match_properties\[1\]\.values /)
})

t.test('descriptions for generated names', async (t) => {
  t.equal(describeCondition({ key: 'plan', op: 'is', values: ['pro', 'team'] }), 'plan is pro or team')
  t.equal(describeCondition({ key: 'plan', op: 'is', values: ['a', 'b', 'c'] }), 'plan is a, b or c')
  t.equal(describeCondition({ key: 'plan', op: 'is_not', values: ['free'] }), 'plan is not free')
  t.equal(describeCondition({ key: 'ref', op: 'contains', values: ['mail'] }), 'ref contains mail')
  t.equal(describeCondition({ key: 'coupon', op: 'exists' }), 'coupon exists')
})
