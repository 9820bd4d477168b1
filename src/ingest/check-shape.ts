import type { ErrorObject } from 'ajv'
import { Event, EVENT_TYPES } from '../schema/index.js'
import { createAjv, fieldOf, sentence } from '../schema/index.js'
import { TIMESTAMP_MESSAGE } from './timestamp.js'

const ajv = createAjv()

// Compiled once at module load: the ingest hot path only calls the generated function.
const validate = ajv.compile(Event)

const TYPE_MESSAGE = `type must be one of ${EVENT_TYPES.join(', ')}`
const PROPERTY_VALUE = 'a string, number, boolean or null'
const AMOUNT_MESSAGE = 'revenue.amount must be a decimal string or a number, at least 0 and below 10^12, with at most 4 decimal places'

/**
 * Turns Ajv's first failure into one readable sentence naming the field by its path.
 * Exported for its tests: the generic branches cover keywords the Event schema may grow.
 */
export function describeErrors(errors: ErrorObject[]): string {
  // With allErrors off, validation stops at the first failing keyword, which Ajv reports last;
  // anything before it belongs to the branches of an anyOf or to a propertyNames check.
  const last = errors[errors.length - 1]
  const field = fieldOf(last.instancePath)
  if (field === 'type') return TYPE_MESSAGE
  if (field === 'timestamp') return TIMESTAMP_MESSAGE
  if (last.keyword === 'anyOf') {
    if (field === 'revenue.amount') return AMOUNT_MESSAGE
    return field.startsWith('properties.') ? `${field} must be ${PROPERTY_VALUE}` : `${field} is not valid`
  }
  if (last.keyword === 'propertyNames') {
    const inner = errors[0]
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
