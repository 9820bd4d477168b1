import type { Test } from 'tap'
import type { Reply } from './http.js'

/** Any tap test object. */
export type Asserts = Test

const STACK = /\n\s+at .+[:(]\d+/

/**
 * docs/api.md conventions: every error answer is `{"error": "<sentence>"}` and never a stack trace.
 * `expected` is the exact message when a string, a pattern it must match when a RegExp.
 */
export function isError(t: Asserts, reply: Reply, status: number, expected?: string | RegExp, label = ''): void {
  const what = `${label ? label + ': ' : ''}${reply.text.slice(0, 300)}`
  t.equal(reply.status, status, `status ${status} — ${what}`)
  t.type(reply.json?.error, 'string', `body has an error string — ${what}`)
  t.ok(typeof reply.json?.error === 'string' && reply.json.error.trim().length > 0, 'the error sentence is not blank')
  t.notMatch(reply.text, STACK, 'no stack trace in the answer')
  t.match(reply.headers.get('content-type') ?? '', /^application\/json/, 'a JSON content type')
  if (typeof expected === 'string') t.equal(reply.json?.error, expected, 'exact error message')
  else if (expected) t.match(reply.json?.error, expected, `error message matches ${expected}`)
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A 400 (or the given status) whose message names the field; for a nested field, naming either the
 * parent or the leaf (`["utm", "source"]`) is enough.
 */
export function namesField(t: Asserts, reply: Reply, field: string | string[], status = 400, label = ''): void {
  const names = Array.isArray(field) ? field : [field]
  isError(t, reply, status, new RegExp(names.map(escape).join('|')), label || `names ${names.join(' or ')}`)
}

/** Access-Control-Allow-Origin: * on an ingestion answer (docs/api.md §1 CORS). */
export function hasCors(t: Asserts, reply: Reply, label = ''): void {
  t.equal(reply.headers.get('access-control-allow-origin'), '*', `Access-Control-Allow-Origin: * ${label}`)
}
