// Bundles the browser client into dist/public (run by `npm run build` after tsc):
//   script.js  the core, budgeted at 3072 bytes minified and gzipped (docs/api.md §7)
//   vitals.js  Google's web-vitals, loaded by the core after itself
// Type-checks the client first with its own tsconfig (DOM types), since esbuild only strips types.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
export const OUT_DIR = join(ROOT, 'dist', 'public')
export const CORE_BUDGET_GZIP = 3072

/** esbuild options shared by the build and the size test, so both measure the same bytes */
export const CLIENT_BUILD = {
  entryPoints: { script: join(HERE, 'script.ts'), vitals: join(HERE, 'vitals.ts') },
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  charset: 'utf8',
  logLevel: 'warning',
}

/** web-vitals is Apache-2.0: its notice travels with the minified copy */
function vitalsNotice() {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'web-vitals', 'package.json'), 'utf8'))
  return `/*! web-vitals ${version} (c) Google LLC, Apache License 2.0 */\n`
}

/** Bundles both files in memory. Returns name → bytes. */
export async function bundleClient() {
  const result = await build({ ...CLIENT_BUILD, outdir: OUT_DIR, write: false })
  const files = {}
  for (const file of result.outputFiles) files[file.path.slice(OUT_DIR.length + 1)] = Buffer.from(file.contents)
  files['vitals.js'] = Buffer.concat([Buffer.from(vitalsNotice()), files['vitals.js']])
  return files
}

export const gzipSize = (bytes) => gzipSync(bytes).length

function typecheck() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', join(HERE, 'tsconfig.json')], { stdio: 'inherit' })
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    typecheck()
  } catch {
    process.stderr.write('client: type errors (see above)\n')
    process.exit(1)
  }
  const files = await bundleClient()
  const { mkdir, writeFile } = await import('node:fs/promises')
  await mkdir(OUT_DIR, { recursive: true })
  for (const [name, bytes] of Object.entries(files)) {
    await writeFile(join(OUT_DIR, name), bytes)
    // `npm run build --silent` (as npm test runs it) stays silent
    if (process.env.npm_config_loglevel !== 'silent') process.stdout.write(`client: dist/public/${name} ${bytes.length} bytes, ${gzipSize(bytes)} gzipped\n`)
  }
}
