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
  const own = hostname || url
  const none = own
    ? referrerIsOwn(referrer, 0, referrer.length, own, 0, own.length, !hostname)
    : referrerIsOwn(referrer, 0, referrer.length, '', -1, -1, false)
  if (none === undefined) return hostOfWide(referrer, hostname, url)
  return none ? null : referrer.slice(spanFrom, spanTo).toLowerCase()
}

/**
 * referrerHost's question where the texts lie, a record's UTF-8 bytes or strings: whether the
 * referrer `ref[refFrom, refTo)` names no host, or the page's own (`own[ownFrom, ownTo)`, a URL when
 * `ownIsUrl`, else a host; `ownFrom` -1 for none). Else false, its host left in [spanFrom, spanTo) of
 * `ref`. Undefined when the hosts hold text beyond ASCII, which only strings compare.
 */
export function referrerIsOwn(
  ref: string | Uint8Array, refFrom: number, refTo: number, own: string | Uint8Array, ownFrom: number, ownTo: number, ownIsUrl: boolean,
): boolean | undefined {
  if (!hostSpan(ref, refFrom, refTo, true)) return undefined
  const from = spanFrom
  const to = spanTo
  if (from === to) return true
  if (ownFrom < 0) return false
  if (!hostSpan(own, ownFrom, ownTo, ownIsUrl)) return undefined
  const same = sameLower(ref, from, to, own, spanFrom, spanTo)
  spanFrom = from
  spanTo = to
  return same
}

/** where hostSpan found the host: [spanFrom, spanTo) */
let spanFrom = 0
let spanTo = 0

/** a character of a string, or a byte of UTF-8 (the same below 0x80, all that is compared) */
const codeAt = (text: string | Uint8Array, i: number): number => (typeof text === 'string' ? text.charCodeAt(i) : text[i])

/**
 * Finds the bare host of the URL (or of a text that starts with one; with `inUrl` false, of the host)
 * in `text[from, to)` into spanFrom/spanTo: after the scheme and any credentials, before the path and
 * any port (unless the colon is inside an IPv6 literal), without a leading `www.` in any case. False
 * when the host holds a character beyond ASCII: lower-casing may change such a text's length.
 */
function hostSpan(text: string | Uint8Array, from: number, to: number, inUrl: boolean): boolean {
  findHost(text, from, to, inUrl)
  for (let i = spanFrom; i < spanTo; i++) if (codeAt(text, i) >= 0x80) return false
  return true
}

/**
 * hostSpan's search, whatever the host holds. The leading `www.` goes before lower-casing, which
 * is the same as after: no character beyond ASCII lower-cases to a `w` or a `.`.
 */
function findHost(text: string | Uint8Array, from: number, to: number, inUrl: boolean): void {
  if (inUrl) {
    const start = from
    for (let i = start; i + 1 < to; i++) {
      if (codeAt(text, i) === 47 && codeAt(text, i + 1) === 47) {
        from = i + 2
        break
      }
    }
    for (let i = from; i < to; i++) {
      const c = codeAt(text, i)
      // '/', '?', '#'
      if (c === 47 || c === 63 || c === 35) {
        to = i
        break
      }
    }
    // credentials end at the last '@'; a port starts at the last ':' unless a ']' comes after it
    let at = -1
    let colon = -1
    let bracket = -1
    for (let i = to - 1; i >= from; i--) {
      const c = codeAt(text, i)
      if (c === 64) {
        at = i
        break
      }
      if (c === 58 && colon < 0) colon = i
      if (c === 93 && bracket < 0) bracket = i
    }
    if (at >= 0) from = at + 1
    if (colon >= from && colon > bracket) to = colon
  }
  if (
    to - from >= 4 && (codeAt(text, from) | 0x20) === 119 && (codeAt(text, from + 1) | 0x20) === 119 && (codeAt(text, from + 2) | 0x20) === 119 &&
    codeAt(text, from + 3) === 46
  ) from += 4
  spanFrom = from
  spanTo = to
}

/** whether two stretches of ASCII text are the same lower-cased */
function sameLower(a: string | Uint8Array, aFrom: number, aTo: number, b: string | Uint8Array, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false
  for (let i = 0; i < aTo - aFrom; i++) {
    const x = codeAt(a, aFrom + i)
    const y = codeAt(b, bFrom + i)
    if (x !== y && lowerAscii(x) !== lowerAscii(y)) return false
  }
  return true
}

const lowerAscii = (c: number): number => (c >= 65 && c <= 90 ? c | 0x20 : c)

/** referrerHost for hosts beyond ASCII: found where hostSpan finds them, lower-cased as strings, then compared */
function hostOfWide(referrer: string, hostname: string | undefined, url: string | undefined): string | null {
  const host = lowerHost(referrer, true)
  if (host === '') return null
  const own = hostname ? lowerHost(hostname, false) : url ? lowerHost(url, true) : ''
  return own === host ? null : host
}

/** the bare host hostSpan finds in a whole string, lower-cased whatever it holds */
function lowerHost(text: string, inUrl: boolean): string {
  findHost(text, 0, text.length, inUrl)
  return text.slice(spanFrom, spanTo).toLowerCase()
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
