import t from 'tap'
import { BREAKDOWN_DIMENSIONS, BREAKDOWN_MAX_LIMIT } from '../schema/index.js'
import { BREAKDOWN_LIMIT, breakdownLines, countryLabel, DIMENSION_LABELS, DIMENSIONS, valueLabel } from './breakdown.js'

t.test('every dimension of the API has a label, in the API\'s order', async (t) => {
  t.same(DIMENSIONS, [...BREAKDOWN_DIMENSIONS])
  t.same(Object.values(DIMENSION_LABELS), ['Source', 'Referrer', 'UTM source', 'UTM medium', 'UTM campaign', 'Entry page', 'Device', 'Browser', 'OS', 'Country'])
})

t.test('the table asks for as many values as the API gives', async (t) => {
  t.ok(BREAKDOWN_LIMIT >= 1 && BREAKDOWN_LIMIT <= BREAKDOWN_MAX_LIMIT)
})

t.test('a missing value reads as what it means', async (t) => {
  t.equal(valueLabel('source', null), 'Direct')
  t.equal(valueLabel('referrer', null), 'Direct')
  for (const by of ['utm_source', 'utm_medium', 'utm_campaign'] as const) t.equal(valueLabel(by, null), '(none)', by)
  for (const by of ['entry_page', 'device', 'browser', 'os', 'country'] as const) t.equal(valueLabel(by, null), '(unknown)', by)
  t.equal(valueLabel('utm_campaign', ''), '(empty)', 'an empty value is not confused with none')
  t.equal(valueLabel('referrer', 'search.example'), 'search.example', 'values as they are')
  t.equal(valueLabel('entry_page', '/pricing'), '/pricing')
})

t.test('countries by name, with their code', async (t) => {
  t.equal(countryLabel('DE'), 'Germany (DE)')
  t.equal(valueLabel('country', 'FR'), 'France (FR)')
  t.equal(countryLabel('QQ'), 'QQ', 'a code without a name stays a code')
})

t.test('the table\'s lines: the values, then Other', async (t) => {
  const lines = breakdownLines({
    by: 'source',
    rows: [
      { value: 'newsletter', sessions: 4, conversions: 3, conversion_rate: 0.75 },
      { value: null, sessions: 10, conversions: 1, conversion_rate: 0.1 },
    ],
    other: { sessions: 8, conversions: 2 },
  })
  t.same(lines.map((l) => [l.label, l.sessions, l.conversions, l.rate, l.other]), [
    ['newsletter', 4, 3, 0.75, false],
    ['Direct', 10, 1, 0.1, false],
    ['Other', 8, 2, 0.25, true],
  ])
  t.equal(new Set(lines.map((l) => l.key)).size, 3, 'keys are distinct')
  t.same(breakdownLines({ by: 'os', rows: [], other: null }), [], 'nothing converted: no lines')
  t.equal(breakdownLines({ by: 'os', rows: [], other: { sessions: 0, conversions: 0 } })[0].rate, 0, 'no sessions: rate 0')
})

t.test('a value that reads like a key of null or Other keeps its own key', async (t) => {
  const lines = breakdownLines({ by: 'utm_campaign', rows: [{ value: 'Other', sessions: 1, conversions: 1, conversion_rate: 1 }, { value: null, sessions: 1, conversions: 1, conversion_rate: 1 }], other: { sessions: 1, conversions: 1 } })
  t.equal(new Set(lines.map((l) => l.key)).size, 3)
})
