import { LRUCache } from 'lru-cache'
/**
 * The Origin rule of docs/api.md §1: a site with a `domain` takes browser events only from that host or
 * its subdomains. Requests without an Origin (backend callers) never reach this check.
 */

/** hostnames in the form URL gives them: lower case, punycode, no trailing dot */
function hostnameOf(url: string): string | undefined {
  let host: string
  try {
    host = new URL(url).hostname
  } catch {
    return undefined
  }
  if (host.endsWith('.')) host = host.slice(0, -1)
  return host === '' ? undefined : host
}

// Site domains are few and fixed, so their normal form is computed once each.
// ('' stands for "no hostname": the cache holds no undefined, and no hostname is empty)
const domainCache = new LRUCache<string, string>({ max: 10_000 })

/**
 * A site's domain as a bare hostname. Tolerates what people paste into a domain field:
 * `Example.com`, `https://example.com/`, `example.com:443`, `bücher.de`.
 */
export function normalizeDomain(domain: string): string | undefined {
  const known = domainCache.get(domain)
  if (known !== undefined) return known || undefined
  const trimmed = domain.trim()
  const normal = hostnameOf(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`)
  domainCache.set(domain, normal ?? '')
  return normal
}

// Parsing an Origin costs about a third of validating a whole event (measured); a site's
// visitors send a handful of distinct ones, so recent answers are kept.
const originCache = new LRUCache<string, string>({ max: 1024 })

function originHost(origin: string): string | undefined {
  const known = originCache.get(origin)
  if (known !== undefined) return known || undefined
  const host = hostnameOf(origin)
  originCache.set(origin, host ?? '')
  return host
}

/**
 * Whether a request with this `Origin` header may send events to a site whose domain is `domain`:
 * its host must be the domain or a subdomain of it. The opaque origin `null` (sandboxed frames,
 * `file:` pages) and anything that is not a URL with a host are refused.
 *
 * @example originAllowed('https://shop.example.com', 'example.com') === true
 * @example originAllowed('https://badexample.com', 'example.com') === false
 */
export function originAllowed(origin: string, domain: string): boolean {
  const site = normalizeDomain(domain)
  if (site === undefined || origin === 'null') return false
  const host = originHost(origin)
  if (host === undefined) return false
  return host === site || (host.length > site.length && host.endsWith(site) && host[host.length - site.length - 1] === '.')
}
