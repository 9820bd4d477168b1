import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { StaticAsset, type HttpServer } from '../http/index.js'

/** where `npm run build` writes the browser files: dist/public beside dist/api */
const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url))
const SCRIPT_TYPE = 'application/javascript; charset=utf-8'
/** the URL has no version in it, so copies are revalidated (ETag → 304) after an hour */
const MAX_AGE_S = 3600

/** The browser client (docs/api.md §7): the core and the web-vitals part it loads after itself. */
export const CLIENT_FILES = ['script.js', 'vitals.js'] as const

/**
 * GET /script.js and /vitals.js: embedded by other sites' pages, so any origin may read them.
 * The bytes are read here, once: start-up fails naming the file when the build did not make it.
 */
export function assetRoutes(server: HttpServer, dir = PUBLIC_DIR): void {
  for (const name of CLIENT_FILES) {
    const asset = StaticAsset.fromFile(join(dir, name), { contentType: SCRIPT_TYPE, maxAge: MAX_AGE_S, cors: true })
    server.route('GET', `/${name}`, (req) => asset.answer(req), { keepAlive: true })
  }
}
