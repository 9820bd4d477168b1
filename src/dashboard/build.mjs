// Builds the dashboard into dist/public: type-checks it against the browser's types (its own
// tsconfig), bundles and minifies it with esbuild under content-hashed names, and writes the page
// that names them. Run by `npm run build` after tsc.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))
const out = join(here, '..', '..', 'dist', 'public')
const require = createRequire(import.meta.url)

execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' })

mkdirSync(out, { recursive: true })
for (const name of readdirSync(out)) if (name.startsWith('dashboard-')) rmSync(join(out, name))

const result = await build({
  entryPoints: [join(here, 'main.tsx'), join(here, 'style.css')],
  entryNames: 'dashboard-[hash]',
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  metafile: true,
  logLevel: 'warning',
})

const outputs = Object.entries(result.metafile.outputs)
const named = (ext) => basename(outputs.find(([file, o]) => o.entryPoint && file.endsWith(ext))[0])
const js = named('.js')
const css = named('.css')
const page = readFileSync(join(here, 'index.html'), 'utf8').replace('%JS%', js).replace('%CSS%', css)
writeFileSync(join(out, 'index.html'), page)

const size = (file) => `${(readFileSync(join(out, file)).length / 1024).toFixed(1)} KiB`
console.log(`dashboard: ${js} ${size(js)}, ${css} ${size(css)}`)
