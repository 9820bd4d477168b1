import t, { type Test } from 'tap'
import { objectElementRanges } from './array-elements.js'

function check(t: Test, text: string): void {
  const body = Buffer.from(text)
  const parsed = JSON.parse(text.replace(/^\ufeff/, '')) as unknown[]
  const ranges = objectElementRanges(body)
  if (!ranges) return void t.fail(`no ranges for ${text}`)
  t.equal(ranges.length, parsed.length * 2, `one range per element: ${text.slice(0, 60)}`)
  parsed.forEach((element, k) => {
    const [start, end] = [ranges[2 * k], ranges[2 * k + 1]]
    if (typeof element === 'object' && element !== null && !Array.isArray(element)) {
      t.same(JSON.parse(body.subarray(start, end).toString()), element, `element ${k}`)
    } else {
      t.same([start, end], [-1, -1], `element ${k} is not an object`)
    }
  })
}

t.test('finds every object element of an array, whatever its strings and nesting hold', async (t) => {
  for (const text of [
    '[]',
    '[{}]',
    ' \n[ {"a":1} , {"b":[1,{"c":"}"}]} ]\r\n',
    '[{"s":"a \\" quote, a } brace and a ] bracket"},{"t":"\\\\"}]',
    '[1, "x", {"a":null}, [2,{"b":3}], true, {"k":"caf\u00e9 \u{1F600}"}, null]',
    '["{", {"a":"["}, "]"]',
    '\ufeff[{"bom":1}]',
  ]) check(t, text)
})

const KEY_ENDS = ['', '"', '}']

t.test('random arrays of random values', async (t) => {
  let seed = 7
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
  const value = (depth: number): unknown => {
    const k = Math.floor(rnd() * (depth > 2 ? 4 : 6))
    if (k === 0) return Math.floor(rnd() * 1000) - 500
    if (k === 1) return ['', 'a', '"', '\\', '{[', '}]', 'é', '\n'][Math.floor(rnd() * 8)]
    if (k === 2) return rnd() < 0.5 ? null : rnd() < 0.5
    if (k === 3) return rnd() * 10
    if (k === 4) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1))
    return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => ['k' + i + KEY_ENDS[i % 3], value(depth + 1)]))
  }
  for (let n = 0; n < 200; n++) check(t, JSON.stringify(Array.from({ length: Math.floor(rnd() * 6) }, () => value(0)), null, n % 2 ? 1 : undefined))
})

t.test('text that is not an array gives null', async (t) => {
  t.equal(objectElementRanges(Buffer.from('{"a":1}')), null)
  t.equal(objectElementRanges(Buffer.from('[{"a":1}')), null)
})
