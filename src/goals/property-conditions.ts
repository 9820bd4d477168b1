import type { PropertyCondition } from '../schema/index.js'

type Properties = Readonly<Record<string, string | number | boolean | null>> | undefined

/** A goal's conditions compiled into one test of an event's properties. */
export type PropertiesTest = (properties: Properties) => boolean

/** A property value as conditions compare it: strings as they are, anything else as its JSON text. */
export const propertyText = (v: string | number | boolean | null): string => (typeof v === 'string' ? v : JSON.stringify(v))

function compileOne(c: PropertyCondition): PropertiesTest {
  const { key } = c
  const values = c.values ?? []
  switch (c.op) {
    case 'exists':
      return (p) => p !== undefined && Object.hasOwn(p, key)
    case 'is': {
      const set = new Set(values)
      return (p) => p !== undefined && Object.hasOwn(p, key) && set.has(propertyText(p[key]))
    }
    case 'is_not': {
      const set = new Set(values)
      return (p) => p === undefined || !Object.hasOwn(p, key) || !set.has(propertyText(p[key]))
    }
    case 'contains':
      return (p) => {
        if (p === undefined || !Object.hasOwn(p, key)) return false
        const text = propertyText(p[key])
        for (const v of values) if (text.includes(v)) return true
        return false
      }
  }
}

/**
 * Compiles conditions once per goal (docs/api.md §3): all must hold, any of a condition's values
 * may. Sets are built here so that matching an event costs a hash lookup per condition.
 */
export function compileConditions(conditions: readonly PropertyCondition[]): PropertiesTest {
  const tests = conditions.map(compileOne)
  if (tests.length === 1) return tests[0]
  return (p) => {
    for (const t of tests) if (!t(p)) return false
    return true
  }
}

/**
 * The conditions in a canonical order, for a goal's identity: values sorted and without repeats,
 * conditions sorted and without repeats, so that neither order makes two goals differ.
 */
export function canonicalConditions(conditions: readonly PropertyCondition[]): string {
  const parts = conditions.map((c) => JSON.stringify([c.key, c.op, [...new Set(c.values ?? [])].sort()]))
  return `[${[...new Set(parts)].sort().join(',')}]`
}

/**
 * Why the conditions cannot be stored (the field to name and the sentence), or undefined. Schema
 * checks (lengths, counts, operators) come first; these are the rules between fields.
 */
export function checkConditions(conditions: readonly PropertyCondition[]): string | undefined {
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i]
    if (c.op === 'exists' && c.values !== undefined) return `match_properties[${i}].values must be absent for op exists`
    if (c.op !== 'exists' && c.values === undefined) return `match_properties[${i}].values is required for op ${c.op}`
  }
  return undefined
}

const listed = (values: readonly string[], joiner: string): string =>
  values.length === 1 ? values[0] : `${values.slice(0, -1).join(', ')} ${joiner} ${values[values.length - 1]}`

/**
 * How a generated goal name spells a condition: `plan is pro or team`, `plan is not pro or team`
 * (none of them), `plan contains pro or team`, `plan exists`.
 */
export function describeCondition(c: PropertyCondition): string {
  const values = c.values ?? []
  switch (c.op) {
    case 'exists':
      return `${c.key} exists`
    case 'is':
      return `${c.key} is ${listed(values, 'or')}`
    case 'is_not':
      return `${c.key} is not ${listed(values, 'or')}`
    case 'contains':
      return `${c.key} contains ${listed(values, 'or')}`
  }
}
