import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import type { Request, Response } from './types.js'

export interface StaticAssetOptions {
  /** the Content-Type header, charset included where it matters */
  contentType: string
  /** seconds a browser or shared cache may reuse the bytes before asking again (default 3600) */
  maxAge?: number
  /** a Cache-Control of its own (e.g. `no-cache` for a page, `immutable` for hashed names); wins over maxAge */
  cacheControl?: string
  /** further headers of every answer (a page's Content-Security-Policy, say) */
  headers?: Record<string, string>
  /** answers carry `Access-Control-Allow-Origin: *`, for files embedded by other sites' pages */
  cors?: boolean
}

interface Variant {
  etag: string
  body: Buffer
  headers: Record<string, string>
}

/** the ETag of each variant without its quotes and W/ prefix, as If-None-Match lists compare */
const opaque = (tag: string): string => tag.trim().replace(/^W\//, '').replace(/^"|"$/g, '')

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any current variant */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  const want = opaque(etag)
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === want)
}

/** whether an Accept-Encoding header accepts gzip (RFC 9110 §12.5.3: q=0 means "not acceptable") */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue
    const q = params.find((p) => p.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/**
 * A file served from bytes held in memory: read once at start-up, answered with a strong ETag (a
 * hash of the bytes), 304 when the client's copy is current, a cache lifetime, and a gzip copy for
 * clients that accept one (compressed once here, never per request).
 *
 * @example
 * const script = StaticAsset.fromFile('dist/public/script.js', { contentType: 'application/javascript; charset=utf-8', cors: true })
 * server.route('GET', '/script.js', (req) => script.answer(req))
 */
export class StaticAsset {
  readonly #plain: Variant
  readonly #gzip: Variant | null

  /** reads `file` now; a missing file stops start-up with a sentence naming it */
  static fromFile(file: string, opts: StaticAssetOptions): StaticAsset {
    let bytes: Buffer
    try {
      bytes = readFileSync(file)
    } catch (err) {
      throw new Error(`cannot read the static file ${file}; run \`npm run build\` to produce it`, { cause: err })
    }
    return new StaticAsset(bytes, opts)
  }

  constructor(bytes: Buffer, opts: StaticAssetOptions) {
    const hash = createHash('sha256').update(bytes).digest('base64url').slice(0, 27)
    const common: Record<string, string> = {
      'Cache-Control': opts.cacheControl ?? `public, max-age=${opts.maxAge ?? 3600}`,
      Vary: 'Accept-Encoding',
      ...(opts.cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
      ...opts.headers,
    }
    const variant = (etag: string, body: Buffer, extra: Record<string, string>): Variant => ({
      etag, body, headers: { ...common, 'Content-Type': opts.contentType, ETag: etag, ...extra },
    })
    this.#plain = variant(`"${hash}"`, bytes, {})
    const gzipped = gzipSync(bytes, { level: 9 })
    // each encoding is its own representation, so each has its own strong validator
    this.#gzip = gzipped.length < bytes.length ? variant(`"${hash}-gz"`, gzipped, { 'Content-Encoding': 'gzip' }) : null
  }

  /** the bytes as served without compression */
  get bytes(): Buffer {
    return this.#plain.body
  }

  get etag(): string {
    return this.#plain.etag
  }

  /** the answer to a GET or HEAD of this file */
  answer(req: Pick<Request, 'headers'>): Response {
    const v = this.#gzip && acceptsGzip(req.headers['accept-encoding']) ? this.#gzip : this.#plain
    if (matches(req.headers['if-none-match'], v.etag)) {
      const { 'Content-Type': _type, 'Content-Encoding': _encoding, ...headers } = v.headers
      return { status: 304, headers }
    }
    return { status: 200, headers: v.headers, body: v.body }
  }
}
