import t from 'tap'
import { goalName } from '../goals/index.js'
import { createBody, generatedName } from './goal-draft.js'

t.test('the placeholder is the name the server will generate', async (t) => {
  t.equal(generatedName({ goalType: 'pageview', match: '/pricing' }), 'Visit /pricing')
  t.equal(generatedName({ goalType: 'pageview', match: '/pricing/?plan=pro' }), 'Visit /pricing', 'the pattern is named normalized, as stored')
  t.equal(generatedName({ goalType: 'custom_event', match: 'add_to_cart' }), 'Add to cart')
  t.equal(generatedName({ goalType: 'custom_event', match: 'add_to_cart' }), goalName('custom_event', 'add_to_cart'), 'the server\'s own function')
  t.equal(generatedName({ goalType: 'pageview', match: '/a/***' }), 'Visit /a/***', 'an invalid pattern is shown as typed (the server will refuse it)')
  t.match(generatedName({ goalType: 'pageview', match: ' ' }), /path pattern/, 'empty: says where the name will come from')
  t.match(generatedName({ goalType: 'custom_event', match: '' }), /event name/)
})

t.test('the create body carries the field of the chosen type, and a name only when given', async (t) => {
  t.same(createBody('shop', { goalType: 'pageview', match: ' /pricing ', name: '' }), { site_id: 'shop', goal_type: 'pageview', match_path: '/pricing' })
  t.same(createBody('shop', { goalType: 'custom_event', match: 'signup', name: ' Signups ' }), { site_id: 'shop', goal_type: 'custom_event', match_event: 'signup', name: 'Signups' })
})

t.test('event goals: property conditions and currency', async (t) => {
  const draft = {
    goalType: 'custom_event' as const, match: 'signup', name: '', currency: ' eur ',
    conditions: [
      { key: ' plan ', op: 'is' as const, values: 'pro, team,' },
      { key: 'coupon', op: 'exists' as const, values: 'ignored' },
      { key: '', op: 'is' as const, values: 'an empty row' },
    ],
  }
  t.same(createBody('shop', draft), {
    site_id: 'shop', goal_type: 'custom_event', match_event: 'signup', currency: 'EUR',
    match_properties: [{ key: 'plan', op: 'is', values: ['pro', 'team'] }, { key: 'coupon', op: 'exists' }],
  })
  t.equal(generatedName(draft), 'Signup (plan is pro or team, coupon exists)', 'the name the server will give')
  t.same(createBody('shop', { goalType: 'pageview', match: '/p', name: '', currency: 'EUR', conditions: draft.conditions }),
    { site_id: 'shop', goal_type: 'pageview', match_path: '/p' }, 'a page goal sends neither')
  t.same(createBody('shop', { goalType: 'custom_event', match: 'x', name: '', currency: '', conditions: [] }),
    { site_id: 'shop', goal_type: 'custom_event', match_event: 'x' })
})
