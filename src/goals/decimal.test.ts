import t from 'tap'
import { divideRounded, formatUnits, parseAmount } from './decimal.js'

t.test('amounts parse to exact units', async (t) => {
  t.equal(parseAmount('49.90'), 499_000n)
  t.equal(parseAmount('0'), 0n)
  t.equal(parseAmount('0.0001'), 1n)
  t.equal(parseAmount('999999999999.9999'), 9_999_999_999_999_999n, 'beyond Number\'s exact integers')
  t.equal(parseAmount(49.9), 499_000n)
  t.equal(parseAmount(0.1), 1000n)
  t.equal(parseAmount(12), 120_000n)
  t.equal(parseAmount('1.23456'), undefined, 'five places')
  t.equal(parseAmount('1000000000000'), undefined, '10^12')
  t.equal(parseAmount('-1'), undefined)
  t.equal(parseAmount('1e3'), undefined)
  t.equal(parseAmount('.5'), undefined)
  t.equal(parseAmount(0.1 + 0.2), undefined, 'a float artefact has more than four places')
  t.equal(parseAmount(1e-7), undefined)
  t.equal(parseAmount(-0.5), undefined)
  t.equal(parseAmount(Number.NaN), undefined)
})

t.test('sums stay exact where floats do not', async (t) => {
  let sum = 0n
  for (let i = 0; i < 10; i++) sum += parseAmount('0.1')!
  t.equal(formatUnits(sum), '1.0000')
  t.equal(formatUnits(parseAmount('999999999999.9999')! * 3n), '2999999999999.9997')
  t.equal(formatUnits(0n), '0.0000')
  t.equal(formatUnits(5n), '0.0005')
})

t.test('averages round half away from zero', async (t) => {
  t.equal(divideRounded(10n, 4), 3n, '2.5 → 3')
  t.equal(divideRounded(9n, 4), 2n, '2.25 → 2')
  t.equal(divideRounded(11n, 4), 3n, '2.75 → 3')
  t.equal(divideRounded(-10n, 4), -3n, '-2.5 → -3')
  t.equal(divideRounded(1n, 3), 0n)
  t.equal(divideRounded(2n, 3), 1n)
  t.equal(divideRounded(12_345_000n, 25), 493_800n, '1234.5 / 25 = 49.38')
  t.equal(divideRounded(7n, 0), 0n, 'no conversions')
})
