import t from 'tap'
import type { IngestContext, SiteInfo } from './context.js'
import { validateEvent } from './validate-event.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const sites = new Map<string, SiteInfo>([['s1', { site_id: 's1', timezone: 'UTC' }]])
const ctx: IngestContext = { now: NOW, retentionMs: 90 * 86_400_000, site: (id) => sites.get(id), botFilter: true }
type Body = Record<string, unknown>
const purchase = (extra: Body = {}): Body => ({ type: 'custom_event', event_name: 'buy', site_id: 's1', session_id: 'x', ...extra })
const errorOf = (raw: Body): string | undefined => {
  const r = validateEvent(raw, ctx)
  return r.kind === 'reject' ? r.error : undefined
}

t.test('revenue on custom_event and payment events', async (t) => {
  for (const amount of ['49.90', '0', '999999999999.9999', 49.9, 0, 12, 0.0001]) {
    t.equal(errorOf(purchase({ revenue: { amount, currency: 'EUR' } })), undefined, JSON.stringify(amount))
  }
  t.equal(errorOf({ type: 'payment', site_id: 's1', session_id: 'x', revenue: { amount: '1', currency: 'USD' } }), undefined)
  const r = validateEvent(purchase({ revenue: { amount: '1.5', currency: 'EUR', extra: 1 } }), ctx)
  t.same(r.kind === 'accept' && r.event.revenue, { amount: '1.5', currency: 'EUR' }, 'unknown members dropped')
})

t.test('bad revenue names its field', async (t) => {
  for (const amount of ['1.23456', '-1', '1e3', '1000000000000', '', ' 1', 1e12, -1, 1.23456, 0.1 + 0.2, true, null]) {
    t.match(errorOf(purchase({ revenue: { amount, currency: 'EUR' } })), /^revenue\.amount /, JSON.stringify(amount))
  }
  for (const currency of ['eur', 'EURO', 'E1R', '', 5]) {
    t.match(errorOf(purchase({ revenue: { amount: '1', currency } })), /^revenue\.currency /, JSON.stringify(currency))
  }
  t.match(errorOf(purchase({ revenue: { currency: 'EUR' } })), /^revenue\.amount is required/)
  t.match(errorOf(purchase({ revenue: { amount: '1' } })), /^revenue\.currency is required/)
  t.match(errorOf(purchase({ revenue: '49.90' })), /^revenue /)
  for (const type of ['pageview', 'button_click', 'identify']) {
    t.equal(errorOf(purchase({ type, revenue: { amount: '1', currency: 'EUR' } })), 'revenue is only allowed on custom_event and payment events', type)
  }
})

t.test('event_id', async (t) => {
  t.equal(errorOf(purchase({ event_id: 'order:42_a.b-c' })), undefined)
  for (const id of ['', 'a b', 'x'.repeat(129), 'é', 7]) t.match(errorOf(purchase({ event_id: id })), /^event_id /, JSON.stringify(id))
  t.equal(errorOf(purchase({ event_id: null })), undefined, 'null is absent')
})
