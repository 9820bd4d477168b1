// docs/api.md cannot drift from the server silently: every operation of the OpenAPI document,
// every status it declares, every error of the registry and every setting must appear in it.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { openApiDocument } from '../dist/api/index.js'
import { ERRORS } from '../dist/http/index.js'

const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8')
const doc = read('../docs/api.md')

type Operations = Record<string, Record<string, { responses?: Record<string, unknown> }>>
const paths = (openApiDocument() as { paths: Operations }).paths
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete'])

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** the rows of every markdown table whose header row starts with `firstColumn` */
function tableRows(firstColumn: string): string[][] {
  const header = new RegExp(`^\\|\\s*${escape(firstColumn)}\\s*\\|`)
  const lines = doc.split('\n')
  const rows: string[][] = []
  lines.forEach((line, i) => {
    if (!header.test(line)) return
    for (const row of lines.slice(i + 2)) {
      if (!row.startsWith('|')) break
      rows.push(row.split('|').slice(1, -1).map((cell) => cell.trim()))
    }
  })
  return rows
}

t.test('every path and method of /api/openapi.json is documented', async (t) => {
  const operations = Object.entries(paths).flatMap(([path, ops]) =>
    Object.keys(ops).filter((m) => METHODS.has(m)).map((m) => `${m.toUpperCase()} ${path}`))
  t.ok(operations.length >= 20, `the document lists its operations (${operations.length})`)
  for (const op of operations) {
    // "GET /api/goals" must not be satisfied by "GET /api/goals/sessions"
    const mentioned = new RegExp(`${escape(op)}(?![\\w/.-])`).test(doc)
    t.ok(mentioned, `${op} appears in docs/api.md`)
  }
})

t.test('every status the OpenAPI document declares is explained', async (t) => {
  const explained = new Set(tableRows('status').map((row) => row[0]))
  const declared = new Set(Object.values(paths).flatMap((ops) =>
    Object.values(ops).flatMap((op) => Object.keys(op.responses ?? {}))))
  for (const status of declared) t.ok(explained.has(status), `status ${status} is in the statuses table`)
})

t.test('every error of src/http/errors.ts is documented with its status', async (t) => {
  const rows = tableRows('status').filter((row) => /^`[A-Z_]+`$/.test(row[1] ?? ''))
  const documented = new Map(rows.map((row) => [row[1].slice(1, -1), Number(row[0])]))
  const registry = ERRORS as Record<string, { status: number; message: (...args: string[]) => string }>
  for (const [code, { status, message }] of Object.entries(registry)) {
    t.equal(documented.get(code), status, `${code} is documented as ${status}`)
    t.ok(doc.includes(`\`${status}\``) || doc.includes(`| ${status} |`), `status ${status} appears`)
    // a sentence without parameters is fixed: the page must show it word for word
    if (message.length === 0) t.ok(doc.includes(message()), `the sentence of ${code} appears: "${message()}"`)
  }
  for (const code of documented.keys()) t.ok(code in registry, `${code} in docs/api.md exists in the registry`)
})

// the settings table (docs/configuration.md) is held to the code by src/config/settings-doc.test.ts

t.test('the WebSocket close codes are those the live route sends', async (t) => {
  const codes = tableRows('close code').map((row) => row[0].replace(/`/g, ''))
  const refusals = ['AUTH_REQUIRED', 'BAD_REQUEST', 'NO_SITE_ACCESS', 'NOT_FOUND'] as const
  for (const code of refusals) t.ok(codes.includes(String(4000 + ERRORS[code].status)), `close code for ${code}`)
})
