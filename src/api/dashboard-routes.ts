import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { fail, type HttpServer, type Request, type Response } from '../http/index.js'

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

export interface StaticAsset {
  body: Buffer
  gzip: Buffer
  etag: string
  headers: Record<string, string>
}

/** A file held in memory, with its gzip form and their entity tags computed once. */
export function staticAsset(body: Buffer, contentType: string, cacheControl: string, extra: Record<string, string> = {}): StaticAsset {
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 22)
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${tag}"`,
    headers: { 'Content-Type': contentType, 'Cache-Control': cacheControl, Vary: 'Accept-Encoding', ...extra },
  }
}

/** If-None-Match holds `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  const bare = (t: string) => t.trim().replace(/^W\//, '')
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || bare(t) === bare(etag))
}

/**
 * The answer to a GET of a static asset: 304 when the client's copy is current, else the bytes,
 * gzipped when the client takes gzip (each encoding has its own entity tag).
 */
export function serveAsset(req: Request, asset: StaticAsset): Response {
  const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')
  const etag = gzip ? asset.etag.replace(/"$/, '-gz"') : asset.etag
  const headers: Record<string, string> = { ...asset.headers, ETag: etag }
  if (etagMatches(req.headers['if-none-match'], etag)) return { status: 304, headers }
  if (gzip) headers['Content-Encoding'] = 'gzip'
  return { status: 200, headers, body: gzip ? asset.gzip : asset.body }
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
  const html = staticAsset(readFileSync(page), TYPES['.html']!, REVALIDATE, PAGE_HEADERS)
  server.route('GET', '/', (req) => serveAsset(req, html))
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)]
    if (!name.startsWith('dashboard-') || !type) continue
    const asset = staticAsset(readFileSync(join(dir, name)), type, IMMUTABLE, { 'X-Content-Type-Options': 'nosniff' })
    server.route('GET', `/${name}`, (req) => serveAsset(req, asset))
  }
}
