// docs/api.md §7: the core, minified and gzipped, is at most 3072 bytes without the web-vitals part.
import t from 'tap'
// @ts-expect-error the build script is plain JavaScript without declarations
import { bundleClient, gzipSize, CORE_BUDGET_GZIP } from './build.mjs'

const files: Record<string, Buffer> = await bundleClient()

t.test('the core fits the budget', async (t) => {
  const core = files['script.js']
  const size = gzipSize(core)
  t.ok(size <= CORE_BUDGET_GZIP, `script.js is ${size} bytes gzipped (${core.length} minified); the budget is ${CORE_BUDGET_GZIP}`)
  t.equal(CORE_BUDGET_GZIP, 3072)
  t.notMatch(core.toString(), /largest-contentful-paint|layout-shift/, 'web-vitals is not in the core')
})

t.test('web-vitals is in its own file', async (t) => {
  const vitals = files['vitals.js'].toString()
  t.match(vitals, /largest-contentful-paint/, 'the LCP observer is bundled')
  t.match(vitals, /\.goalpost\b/, 'it reports through the core')
  t.match(vitals, /^\/\*! web-vitals \d+\.\d+\.\d+ \(c\) Google LLC, Apache License 2\.0 \*\/\n/, 'with its licence notice')
})
