/**
 * A session's attributes, the values its conversions break down by (docs/api.md §9.4): where it
 * came from, where it entered, on what, from which country. Each is fixed by the session's
 * earliest events (the summary's min-by-time fields), so a conversion a backend sends hours later
 * is credited to the session's original source.
 */
import { BREAKDOWN_DIMENSIONS, type BreakdownDimension, type SessionSummary } from '../schema/index.js'
import { describeClientInto } from '../agent/index.js'

export const DIMENSIONS = BREAKDOWN_DIMENSIONS.length
export const dimensionIndex = (by: BreakdownDimension): number => BREAKDOWN_DIMENSIONS.indexOf(by)

/** the values of a session whose summary is nowhere (none stored): counted under no value */
export const NO_VALUES: readonly (string | null)[] = new Array<string | null>(DIMENSIONS).fill(null)

/** The fields of a summary the attributes derive from. */
export interface AttributeFields {
  entry_page: string | null
  ref_host: string | null
  utm_source: string | null
  utm_medium: string | null
  utm_campaign: string | null
  user_agent: string | null
  screen_width: number | null
  country: string | null
}

/**
 * Fills `out` with the session's value of every dimension, in BREAKDOWN_DIMENSIONS' order.
 *
 * @example attributeValues({ utm_source: null, ref_host: 'google.com', … }, out)
 *   // out[0] (source) === 'google.com', out[1] (referrer) === 'google.com'
 */
export function attributeValues(f: AttributeFields, out: (string | null)[]): (string | null)[] {
  return attributesInto(f.entry_page, f.ref_host, f.utm_source, f.utm_medium, f.utm_campaign, f.user_agent, f.screen_width, f.country, out)
}

/** attributeValues from the fields one by one (the session table's, without an object between) */
export function attributesInto(
  entryPage: string | null, refHost: string | null, utmSource: string | null, utmMedium: string | null, utmCampaign: string | null,
  userAgent: string | null, screenWidth: number | null, country: string | null, out: (string | null)[],
): (string | null)[] {
  out[0] = utmSource ?? refHost
  out[1] = refHost
  out[2] = utmSource
  out[3] = utmMedium
  out[4] = utmCampaign
  out[5] = entryPage
  describeClientInto(userAgent ?? undefined, screenWidth ?? undefined, out, 6)
  out[9] = country
  return out
}

/** A stored or remote summary's attributes (summaries from before attributes were kept have none). */
export function summaryAttributes(s: SessionSummary, out: (string | null)[] = new Array<string | null>(DIMENSIONS)): (string | null)[] {
  return attributesInto(
    s.entry_page, s.ref_host ?? null, s.utm_source ?? null, s.utm_medium ?? null, s.utm_campaign ?? null, s.user_agent, s.screen_width, s.country ?? null, out,
  )
}

/**
 * The host a referrer names, lower-cased and without a leading `www.`, or null when there is none
 * or it is the page's own host (`hostname`, else the host of its `url`, compared the same way):
 * moving between one's own pages is not a source. Hand-written rather than `new URL`: it runs for
 * every event whose session has no source from another host yet, and needs the host only. Hosts of
 * ASCII, nearly all, are compared where they lie in the texts: a referrer from the site itself (most
 * of them) makes no string.
 *
 * @example referrerHost('https://WWW.Google.com/search?q=x', 'shop.example') // 'google.com'
 * @example referrerHost('https://www.shop.example/cart', 'shop.example') // null
 */
export function referrerHost(referrer: string | undefined, hostname: string | undefined, url?: string): string | null {
  if (!referrer) return null
  if (!hostSpan(referrer, true)) return hostOfWide(referrer, hostname, url)
  const from = spanFrom
  const to = spanTo
  if (from === to) return null
  const own = hostname || url
  if (own) {
    if (!hostSpan(own, !hostname)) return hostOfWide(referrer, hostname, url)
    if (sameLower(referrer, from, to, own, spanFrom, spanTo)) return null
  }
  return referrer.slice(from, to).toLowerCase()
}

/** where hostSpan found the host: [spanFrom, spanTo) */
let spanFrom = 0
let spanTo = 0

/**
 * Finds the bare host of a URL (or of a text that starts with one; with `inUrl` false, of a text that
 * is a host) into spanFrom/spanTo: after the scheme and any credentials, before the path and any port
 * (unless the colon is inside an IPv6 literal), without a leading `www.` in any case. False when the
 * text holds a character beyond ASCII there: lower-casing may change such a text's length.
 */
function hostSpan(text: string, inUrl: boolean): boolean {
  let from = 0
  let to = text.length
  if (inUrl) {
    from = text.indexOf('//')
    from = from < 0 ? 0 : from + 2
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i)
      // '/', '?', '#'
      if (c === 47 || c === 63 || c === 35) {
        to = i
        break
      }
    }
    const at = to > from ? text.lastIndexOf('@', to - 1) : -1
    if (at >= from) from = at + 1
    const colon = to > from ? text.lastIndexOf(':', to - 1) : -1
    const bracket = to > from ? text.lastIndexOf(']', to - 1) : -1
    if (colon >= from && colon > (bracket >= from ? bracket : -1)) to = colon
  }
  for (let i = from; i < to; i++) if (text.charCodeAt(i) >= 0x80) return false
  if (to - from >= 4 && (text.charCodeAt(from) | 0x20) === 119 && (text.charCodeAt(from + 1) | 0x20) === 119 && (text.charCodeAt(from + 2) | 0x20) === 119 && text.charCodeAt(from + 3) === 46) from += 4
  spanFrom = from
  spanTo = to
  return true
}

/** whether two stretches of ASCII text are the same lower-cased */
function sameLower(a: string, aFrom: number, aTo: number, b: string, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false
  for (let i = 0; i < aTo - aFrom; i++) {
    const x = a.charCodeAt(aFrom + i)
    const y = b.charCodeAt(bFrom + i)
    if (x !== y && lowerAscii(x) !== lowerAscii(y)) return false
  }
  return true
}

const lowerAscii = (c: number): number => (c >= 65 && c <= 90 ? c | 0x20 : c)

/** referrerHost for hosts beyond ASCII: lower-cased as strings, then compared */
function hostOfWide(referrer: string, hostname: string | undefined, url: string | undefined): string | null {
  const host = hostOf(referrer)
  if (host === '') return null
  const own = hostname ? bareHost(hostname) : url ? hostOf(url) : ''
  return own === host ? null : host
}

/** the bare host of a URL (or of a text that starts with one) */
function hostOf(url: string): string {
  let start = url.indexOf('//')
  start = start < 0 ? 0 : start + 2
  let end = url.length
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i)
    // '/', '?', '#'
    if (c === 47 || c === 63 || c === 35) {
      end = i
      break
    }
  }
  let host = url.slice(start, end)
  const at = host.lastIndexOf('@')
  if (at >= 0) host = host.slice(at + 1)
  // a port, unless the colon is inside an IPv6 literal
  const colon = host.lastIndexOf(':')
  if (colon >= 0 && colon > host.lastIndexOf(']')) host = host.slice(0, colon)
  return bareHost(host)
}

function bareHost(host: string): string {
  const h = host.toLowerCase()
  return h.startsWith('www.') ? h.slice(4) : h
}

/*
 * Sessions per value are counted by group: the referrer and the UTM fields together, the entry
 * page, the client's device, browser and system together, the country. A session has one
 * combination of values per group and day, so it is one insert per group (four, not ten), and the
 * sessions of a value are the sum over the combinations that hold it: their sets are disjoint.
 */
/** per group, the dimensions (attributeValues' indexes) its combinations hold, in order */
export const GROUP_DIMENSIONS: readonly (readonly number[])[] = [[2, 3, 4, 1], [5], [6, 7, 8], [9]]
export const GROUPS = GROUP_DIMENSIONS.length
const GROUP_OF = [0, 0, 0, 0, 0, 1, 2, 2, 2, 3]
/** a dimension's group */
export const groupOf = (d: number): number => GROUP_OF[d]

/** The value of dimension `d` in a combination of its group. */
export function valueInCombination(d: number, c: readonly (string | null)[]): string | null {
  switch (d) {
    case 0: return c[0] ?? c[3]
    case 1: return c[3]
    case 2: case 5: case 6: case 9: return c[0]
    case 3: case 7: return c[1]
    default: return c[2]
  }
}
