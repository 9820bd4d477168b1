import t from 'tap'
import { checkStoredGoal, goalIdentity } from './goal-identity.js'

const event = { site_id: 's', goal_type: 'custom_event' as const, match_event: 'signup' }

t.test('plain goals keep the identity they always had', async (t) => {
  t.equal(goalIdentity(event), 's|custom_event|signup')
  t.equal(goalIdentity({ site_id: 's', goal_type: 'pageview', match_path: '/p' }), 's|pageview|/p')
  t.equal(goalIdentity({ ...event, match_properties: [] }), 's|custom_event|signup', 'no conditions is none')
})

t.test('conditions and currency join the identity, in any order', async (t) => {
  const a = goalIdentity({ ...event, currency: 'EUR', match_properties: [{ key: 'plan', op: 'is', values: ['pro', 'team'] }, { key: 'c', op: 'exists' }] })
  const b = goalIdentity({ ...event, currency: 'EUR', match_properties: [{ key: 'c', op: 'exists' }, { key: 'plan', op: 'is', values: ['team', 'pro'] }] })
  t.equal(a, b)
  t.not(a, goalIdentity({ ...event, match_properties: [{ key: 'plan', op: 'is', values: ['pro', 'team'] }, { key: 'c', op: 'exists' }] }), 'without the currency')
  t.not(goalIdentity({ ...event, currency: 'EUR' }), goalIdentity({ ...event, currency: 'USD' }))
  t.not(goalIdentity({ ...event, currency: 'EUR' }), goalIdentity(event))
  const spelled = goalIdentity({ ...event, currency: 'EUR' })
  t.not(goalIdentity({ ...event, match_event: spelled.slice('s|custom_event|'.length) }), spelled, 'an event name spelling the suffix is another goal')
})

t.test('stored goals whose conditions cannot hold together are reported', async (t) => {
  t.equal(checkStoredGoal({ ...event, match_properties: [{ key: 'k', op: 'exists' }] }), undefined)
  t.match(checkStoredGoal({ ...event, match_properties: [{ key: 'k', op: 'is' }] }), /values is required/)
})
