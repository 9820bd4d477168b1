import { LIMITS } from '../schema/index.js'
import { cutChars } from './cut-text.js'

function withoutQuery(path: string): string {
  const q = path.indexOf('?')
  const h = path.indexOf('#')
  const end = q === -1 ? h : h === -1 ? q : Math.min(q, h)
  return end === -1 ? path : path.slice(0, end)
}

/**
 * The `path` of an event that sent only a `url` (docs/api.md §1): the pathname of an absolute URL,
 * or the URL itself, without query and fragment, when it is already a path. Undefined when
 * neither applies (`mailto:x`, `about:blank`, free text). Percent-encoding is left as URL gives it;
 * further normalization belongs to goal matching.
 *
 * @example pathFromUrl('https://example.com/pricing?plan=pro') === '/pricing'
 */
export function pathFromUrl(url: string): string | undefined {
  if (url.startsWith('/')) return withoutQuery(url)
  let pathname: string
  try {
    pathname = new URL(url).pathname
  } catch {
    return undefined
  }
  // URL percent-encodes what it must, which can lengthen a path cut at the url limit.
  return pathname.startsWith('/') ? cutChars(pathname, LIMITS.path) : undefined
}
