import { Ajv, type ErrorObject } from 'ajv'
import addFormats from 'ajv-formats'
import type { Static, TSchema } from '@sinclair/typebox'

const ajv = new Ajv({ allErrors: false, removeAdditional: 'all', strict: false })
;(addFormats as unknown as (a: Ajv) => void)(ajv)

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string }

/** The field an Ajv error is about, as a dotted path (`screen.width`, `sites[2]`). */
export function fieldOf(err: ErrorObject): string {
  const parts = err.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (err.keyword === 'required') parts.push((err.params as { missingProperty: string }).missingProperty)
  let out = ''
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p
  return out || 'body'
}

/** One readable sentence naming the field (API.md: every 4xx names the offending field). */
export function describe(err: ErrorObject): string {
  const field = fieldOf(err)
  const p = err.params as Record<string, unknown>
  switch (err.keyword) {
    case 'required': return `${field} is required`
    case 'type': return `${field} must be ${p.type === 'object' ? 'an object' : p.type === 'array' ? 'an array' : `a ${p.type}`}`
    case 'maxLength': return `${field} must be at most ${p.limit} characters`
    case 'minLength': return p.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${p.limit} characters`
    case 'pattern': return `${field} must match ${p.pattern}`
    case 'minimum': return `${field} must be >= ${p.limit}`
    case 'maximum': return `${field} must be <= ${p.limit}`
    case 'maxItems': return `${field} must have at most ${p.limit} items`
    case 'maxProperties': return `${field} must have at most ${p.limit} keys`
    case 'format': return `${field} must be a valid ${p.format}`
    case 'const': case 'enum': return `${field} has an unsupported value`
    default: return `${field} is invalid (${err.message ?? err.keyword})`
  }
}

/**
 * Compiles a TypeBox schema once; the checker drops unknown fields and answers a sentence naming
 * the first offending field. The same schema feeds the OpenAPI document.
 */
export function checker<S extends TSchema>(schema: S): (value: unknown) => Checked<Static<S>> {
  const validate = ajv.compile(schema)
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: 'body must be a JSON object' }
    if (validate(value)) return { ok: true, value: value as Static<S> }
    return { ok: false, error: describe(validate.errors![0]!) }
  }
}
