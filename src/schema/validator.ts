import { Ajv, type ErrorObject } from 'ajv'
import addFormats from 'ajv-formats'
import type { Static, TSchema } from '@sinclair/typebox'

const DEPRECATED_UNICODE = 'option unicode'

/**
 * The one Ajv setup of the service: unknown fields are dropped wherever a schema closes its object,
 * sentences are ours (Ajv's would only cost time), and lengths count UTF-16 units as docs/api.md says
 * ("as JavaScript counts them"); Ajv's default counts code points, which would let 200 emoji
 * (400 units) through a 256 limit. The `unicode` option is deprecated but still honoured.
 */
export function createAjv(): Ajv {
  const ajv = new Ajv({
    removeAdditional: true,
    allErrors: false,
    messages: false,
    strict: false,
    unicode: false,
    logger: {
      log: console.log,
      warn: (...args: unknown[]) => {
        if (!String(args[0]).includes(DEPRECATED_UNICODE)) console.warn(...args)
      },
      error: console.error,
    },
  })
  ;(addFormats as unknown as (a: Ajv) => void)(ajv)
  return ajv
}

/** `/screen/width` → `screen.width`; JSON Pointer escapes undone. */
export function fieldOf(instancePath: string): string {
  return instancePath
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}

const withArticle = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)

/** One readable sentence for an Ajv error about `field` (docs/api.md: every 4xx names the field). */
export function sentence(e: ErrorObject, field: string): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'required':
      return `${field ? field + '.' : ''}${String(p.missingProperty)} is required`
    case 'type':
      return `${field || 'body'} must be ${withArticle(String(p.type))}`
    case 'maxLength':
      return `${field} must be at most ${String(p.limit)} characters`
    case 'minLength':
      return p.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${String(p.limit)} characters`
    case 'pattern':
      return `${field} must match ${String(p.pattern)}`
    case 'minimum':
      return `${field} must be at least ${String(p.limit)}`
    case 'maximum':
      return `${field} must be at most ${String(p.limit)}`
    case 'maxItems':
      return `${field} must have at most ${String(p.limit)} items`
    case 'minItems':
      return p.limit === 1 ? `${field} must not be empty` : `${field} must have at least ${String(p.limit)} items`
    case 'maxProperties':
      return `${field} must have at most ${String(p.limit)} keys`
    case 'format':
      return `${field} must be a valid ${String(p.format)}`
    case 'anyOf':
      return `${field} has the wrong type`
    default:
      return `${field || 'body'} is not valid (${e.keyword})`
  }
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string }

const ajv = createAjv()

/**
 * Compiles a TypeBox schema once; the checker drops unknown fields and answers a sentence naming
 * the first offending field. The same schema feeds the OpenAPI document.
 */
export function checker<S extends TSchema>(schema: S): (value: unknown) => Checked<Static<S>> {
  const validate = ajv.compile(schema)
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: 'body must be a JSON object' }
    if (validate(value)) return { ok: true, value: value }
    const err = validate.errors![validate.errors!.length - 1]
    return { ok: false, error: sentence(err, fieldOf(err.instancePath)) }
  }
}
