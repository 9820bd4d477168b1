import t from 'tap'
import { goalName, MAX_GOAL_NAME_LENGTH } from './goal-name.js'

t.test('a given name is kept, trimmed', async (t) => {
  t.equal(goalName('pageview', '/pricing', 'Pricing page'), 'Pricing page')
  t.equal(goalName('custom_event', 'signup', '  Signed up \n'), 'Signed up')
})

t.test('blank or absent names are generated', async (t) => {
  for (const blank of [undefined, null, '', '   ', '\t\n']) {
    t.equal(goalName('pageview', '/pricing', blank), 'Visit /pricing')
    t.equal(goalName('custom_event', 'add_to_cart', blank), 'Add to cart')
  }
  t.equal(goalName('custom_event', 'checkout.completed'), 'Checkout completed')
  t.equal(goalName('custom_event', '__sign--up..now__'), 'Sign up now', 'runs collapse, ends trimmed')
  t.equal(goalName('custom_event', 'Purchase'), 'Purchase')
  t.equal(goalName('custom_event', 'élan_vital'), 'Élan vital')
  t.equal(goalName('custom_event', '𝒶_b'), '𝒶 b', 'a first character without case stays')
  t.equal(goalName('custom_event', '___'), '___', 'nothing left: the event name itself')
})

t.test('names are cut to 256 characters', async (t) => {
  t.equal(goalName('pageview', '/' + 'x'.repeat(400)).length, MAX_GOAL_NAME_LENGTH)
  t.equal(goalName('pageview', '/p', 'n'.repeat(300)), 'n'.repeat(256))
  const emoji = 'a'.repeat(255) + '😀'
  const cut = goalName('pageview', '/p', emoji)
  t.equal(cut, 'a'.repeat(255), 'a surrogate pair is not split')
})

t.test('generated names of event goals name their property conditions', async (t) => {
  t.equal(goalName('custom_event', 'signup', null, [{ key: 'plan', op: 'is', values: ['pro', 'team'] }]), 'Signup (plan is pro or team)')
  t.equal(
    goalName('custom_event', 'checkout', '', [{ key: 'plan', op: 'is_not', values: ['free'] }, { key: 'coupon', op: 'exists' }]),
    'Checkout (plan is not free, coupon exists)',
  )
  t.equal(goalName('custom_event', 'signup', 'Mine', [{ key: 'plan', op: 'exists' }]), 'Mine', 'a given name stays')
  t.equal(goalName('custom_event', 'signup', null, []), 'Signup')
  t.equal(goalName('custom_event', 's', null, [{ key: 'k', op: 'is', values: ['v'.repeat(256)] }]).length, MAX_GOAL_NAME_LENGTH)
})
