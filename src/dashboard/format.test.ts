import t from 'tap'
import { count, duration, goalTypeLabel, matchOf, money, percent, windowSummary, WINDOWS } from './format.js'

t.test('conversion rates as percentages', async (t) => {
  t.equal(percent(0), '0%')
  t.equal(percent(1), '100%')
  t.equal(percent(0.0972), '9.7%')
  t.equal(percent(0.9), '90%', 'no trailing .0')
  t.equal(percent(0.0004), '<0.1%', 'a tiny rate is not shown as zero')
  t.equal(percent(0.0005), '0.1%')
})

t.test('durations read as a person would say them', async (t) => {
  t.equal(duration(0), '0 s')
  t.equal(duration(59_400), '59 s')
  t.equal(duration(60_000), '1 min')
  t.equal(duration(183_000), '3 min 3 s')
  t.equal(duration(3_600_000), '1 h')
  t.equal(duration(3_723_000), '1 h 2 min')
})

t.test('goal columns', async (t) => {
  t.equal(goalTypeLabel('pageview'), 'Page')
  t.equal(goalTypeLabel('custom_event'), 'Event')
  t.equal(matchOf({ match_path: '/blog/**' }), '/blog/**')
  t.equal(matchOf({ match_event: 'signup' }), 'signup')
  t.equal(count(1234567), '1,234,567')
})

t.test('the window line', async (t) => {
  t.equal(windowSummary({ total_sessions: 1234, from: '2026-11-16', to: '2026-11-22', timezone: 'Europe/Berlin' }), '1,234 sessions, 2026-11-16 to 2026-11-22 (Europe/Berlin)')
  t.equal(windowSummary({ total_sessions: 1, from: '2026-11-22', to: '2026-11-22', timezone: 'UTC' }), '1 session, 2026-11-22 (UTC)', 'today alone')
})

t.test('the windows offered are today, 7, 30 and 90 days', async (t) => {
  t.same(WINDOWS.map((w) => [w.label, w.days]), [['Today', 1], ['7 days', 7], ['30 days', 30], ['90 days', 90]])
})

t.test('revenue in its currency, exact', async (t) => {
  t.equal(money('1234.5000', 'EUR'), '€1,234.50', 'the currency\'s two decimals')
  t.equal(money('0.0000', 'USD'), '$0.00')
  t.equal(money('49.9050', 'EUR'), '€49.905', 'decimals beyond the currency\'s own are kept, up to four')
  t.equal(money('999999999999.0003', 'EUR'), '€999,999,999,999.0003', 'exact: as a floating-point number this would read .0002')
  t.equal(money('100.0000', 'JPY'), '¥100', 'a currency without decimals')
  t.equal(money('12.5000', 'XYZ'), 'XYZ\u00a012.50', 'a code without a symbol is written out')
})
