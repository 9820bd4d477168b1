// docs/configuration.md's table against the code: every setting listed once, with the default of
// config/default.json and the range its spec accepts, so the docs cannot drift from the code.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { SETTINGS } from './index.js'

const root = new URL('../../', import.meta.url)
const doc = readFileSync(new URL('docs/configuration.md', root), 'utf8')
const defaults = JSON.parse(readFileSync(new URL('config/default.json', root), 'utf8')) as Record<string, unknown>

const rows = new Map<string, { value: string; accepted: string }>()
for (const line of doc.split('\n')) {
  const m = /^\| `(GOALPOST_[A-Z_]+)` \| ([^|]*) \| ([^|]*) \|/.exec(line)
  if (m) rows.set(m[1], { value: m[2].trim(), accepted: m[3].trim() })
}

t.test('every setting is in the table, and nothing else is', async (t) => {
  const envs = Object.values(SETTINGS).map((s) => s.env)
  t.same([...rows.keys()].sort(), [...envs].sort())
})

t.test('each default is the one config/default.json sets', async (t) => {
  for (const [key, setting] of Object.entries(SETTINGS)) {
    const row = rows.get(setting.env)
    if (!row) continue
    const value = defaults[key]
    if (value === undefined) {
      t.notMatch(row.value, /^`[^`]+`$/, `${setting.env} has no default value in config, and the docs name none`)
    } else if (Array.isArray(value)) {
      t.equal(value.length === 0 ? 'none' : row.value, 'none', `${setting.env}: empty by default`)
    } else {
      const shown = /^`([^`]*)`/.exec(row.value)?.[1]
      t.equal(shown, String(value as string | number | boolean), `${setting.env} defaults to ${JSON.stringify(value)}`)
    }
  }
})

t.test('each numeric range is the one the spec accepts', async (t) => {
  for (const setting of Object.values(SETTINGS)) {
    const row = rows.get(setting.env)
    const range = /from (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?)/.exec(setting.accepts)
    if (!row || !range) continue
    const documented = /(\d+)–(\d+)/.exec(row.accepted)
    t.same(documented && [documented[1], documented[2]], [range[1], range[2]], `${setting.env}: ${setting.accepts}`)
  }
})
