import t from 'tap'
import type { ErrorObject } from 'ajv'
import { checkShape, describeErrors } from './check-shape.js'

const error = (instancePath: string, keyword: string, params: Record<string, unknown> = {}): ErrorObject => ({
  instancePath,
  keyword,
  params,
  schemaPath: '#',
})

t.test('a conforming event passes and loses its unknown fields', async (t) => {
  const e: Record<string, unknown> = { type: 'copy', site_id: 's', session_id: 'x', extra: 1 }
  t.equal(checkShape(e), undefined)
  t.same(e, { type: 'copy', site_id: 's', session_id: 'x' })
})

t.test('keyword sentences', async (t) => {
  t.equal(describeErrors([error('/screen/width', 'type', { type: 'number' })]), 'screen.width must be a number')
  t.equal(describeErrors([error('/utm', 'type', { type: 'object' })]), 'utm must be an object')
  t.equal(describeErrors([error('/hostname', 'maxLength', { limit: 256 })]), 'hostname must be at most 256 characters')
  t.equal(describeErrors([error('/visitor_id', 'minLength', { limit: 1 })]), 'visitor_id must not be empty')
  t.equal(describeErrors([error('/code', 'minLength', { limit: 3 })]), 'code must be at least 3 characters')
  t.equal(describeErrors([error('/session_id', 'pattern', { pattern: '^a$' })]), 'session_id must match ^a$')
  t.equal(describeErrors([error('/duration', 'minimum', { limit: 0 })]), 'duration must be at least 0')
  t.equal(describeErrors([error('/properties', 'maxProperties', { limit: 32 })]), 'properties must have at most 32 keys')
  t.equal(describeErrors([error('/x', 'multipleOf', { multipleOf: 2 })]), 'x is not valid (multipleOf)')
})

t.test('the failing keyword is the last error; branch errors before it are context', async (t) => {
  const branches = [error('/properties/a', 'type', { type: 'string' }), error('/properties/a', 'type', { type: 'number' })]
  t.equal(describeErrors([...branches, error('/properties/a', 'anyOf')]), 'properties.a must be a string, number, boolean or null')
  t.equal(describeErrors([...branches, error('/other', 'anyOf')]), 'other is not valid')
  t.match(describeErrors([error('/type', 'const'), error('/type', 'anyOf')]), /^type must be one of pageview, /)
})

t.test('key names', async (t) => {
  const inner = { ...error('/properties', 'maxLength', { limit: 256 }), propertyName: 'kkk' }
  t.equal(describeErrors([inner, error('/properties', 'propertyNames', { propertyName: 'kkk' })]), 'properties keys must be at most 256 characters')
  const other = { ...error('/properties', 'pattern', { pattern: '^a' }), propertyName: 'b' }
  t.equal(describeErrors([other, error('/properties', 'propertyNames', { propertyName: 'b' })]), 'properties has an invalid key')
})

t.test('JSON Pointer escapes are undone in field paths', async (t) => {
  t.equal(describeErrors([error('/ad_click_ids/a~1b~0c', 'type', { type: 'string' })]), 'ad_click_ids.a/b~c must be a string')
})
