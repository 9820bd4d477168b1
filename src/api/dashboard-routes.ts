import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fail, StaticAsset, type HttpServer } from '../http/index.js'

/** where `npm run build` puts the bundled dashboard (src/dashboard/build.mjs) */
const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url))

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

/** bundles carry their content hash in their names, so a cached copy is never stale */
const IMMUTABLE = 'public, max-age=31536000, immutable'
/** the page names the bundles, so it is revalidated on every load (a 304 while unchanged) */
const REVALIDATE = 'no-cache'

/**
 * The page runs only its own bundles, talks only to this server (WebSockets included), and may not
 * be framed by another site.
 */
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
}

/** The dashboard page: revalidated on every load, with the page's own security headers. */
export function pageAsset(bytes: Buffer): StaticAsset {
  return new StaticAsset(bytes, { contentType: TYPES['.html'], cacheControl: REVALIDATE, headers: PAGE_HEADERS })
}

/**
 * `GET /` — the dashboard page — and its bundles at `/dashboard-<hash>.js|css`, read once at start.
 * Without a build the page answers 503 naming the command that makes it.
 */
export function dashboardRoutes(server: HttpServer, dir = PUBLIC_DIR): void {
  const page = join(dir, 'index.html')
  if (!existsSync(page)) {
    server.route('GET', '/', () => fail('UNAVAILABLE', 'the dashboard is not built; run npm run build'))
    return
  }
  const html = pageAsset(readFileSync(page))
  server.route('GET', '/', (req) => html.answer(req), { keepAlive: true })
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)]
    if (!name.startsWith('dashboard-') || !type) continue
    const asset = new StaticAsset(readFileSync(join(dir, name)), { contentType: type, cacheControl: IMMUTABLE, headers: { 'X-Content-Type-Options': 'nosniff' } })
    server.route('GET', `/${name}`, (req) => asset.answer(req), { keepAlive: true })
  }
}
