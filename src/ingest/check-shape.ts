import { Ajv, type ErrorObject } from 'ajv'
import { Event, EVENT_TYPES } from '../schema/event.js'
import { TIMESTAMP_MESSAGE } from './timestamp.js'

const DEPRECATED_UNICODE = 'option unicode'

const ajv = new Ajv({
  // Drops unknown fields, top-level and nested, wherever the schema says additionalProperties: false.
  removeAdditional: true,
  allErrors: false,
  // We write our own sentences; Ajv's would only cost time.
  messages: false,
  // API.md §1 counts lengths "as JavaScript counts them"; Ajv's default counts code points, which
  // would let 200 emoji (400 units) through a 256 limit. The option is deprecated but still honoured.
  unicode: false,
  logger: {
    log: console.log,
    warn: (...args: unknown[]) => {
      if (!String(args[0]).includes(DEPRECATED_UNICODE)) console.warn(...args)
    },
    error: console.error,
  },
})

// Compiled once at module load: the ingest hot path only calls the generated function.
const validate = ajv.compile(Event)

const TYPE_MESSAGE = `type must be one of ${EVENT_TYPES.join(', ')}`
const PROPERTY_VALUE = 'a string, number, boolean or null'

/** `/screen/width` → `screen.width`; JSON Pointer escapes undone. */
function fieldOf(instancePath: string): string {
  return instancePath
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}

function sentence(e: ErrorObject, field: string): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'type':
      return `${field} must be ${withArticle(String(p.type))}`
    case 'maxLength':
      return `${field} must be at most ${p.limit} characters`
    case 'minLength':
      return p.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${p.limit} characters`
    case 'pattern':
      return `${field} must match ${p.pattern}`
    case 'minimum':
      return `${field} must be at least ${p.limit}`
    case 'maxProperties':
      return `${field} must have at most ${p.limit} keys`
    default:
      return `${field} is not valid (${e.keyword})`
  }
}

/**
 * Turns Ajv's first failure into one readable sentence naming the field by its path.
 * Exported for its tests: the generic branches cover keywords the Event schema may grow.
 */
export function describeErrors(errors: ErrorObject[]): string {
  // With allErrors off, validation stops at the first failing keyword, which Ajv reports last;
  // anything before it belongs to the branches of an anyOf or to a propertyNames check.
  const last = errors[errors.length - 1]!
  const field = fieldOf(last.instancePath)
  if (field === 'type') return TYPE_MESSAGE
  if (field === 'timestamp') return TIMESTAMP_MESSAGE
  if (last.keyword === 'anyOf') {
    return field.startsWith('properties.') ? `${field} must be ${PROPERTY_VALUE}` : `${field} is not valid`
  }
  if (last.keyword === 'propertyNames') {
    const inner = errors[0]!
    return inner.keyword === 'maxLength'
      ? `${field} keys must be at most ${(inner.params as { limit: number }).limit} characters`
      : `${field} has an invalid key`
  }
  return sentence(last, field)
}

/**
 * Checks an event against the Event schema, removing unknown fields in place.
 * Returns undefined when it conforms, else the sentence describing the first problem
 * in schema order (deterministic whatever the order of the body's fields).
 */
export function checkShape(event: Record<string, unknown>): string | undefined {
  if (validate(event)) return undefined
  return describeErrors(validate.errors!)
}
