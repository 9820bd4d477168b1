import type { Event } from '../schema/index.js'
import { cut, MAX } from './limits.js'

/** ad click ids: gclid, fbclid, msclkid and every other *clid, and Google's and LinkedIn's others */
const CLICK_ID = /clk?id$|^(gbraid|wbraid|li_fat_id)$/i
/** query parameters that describe a campaign rather than a visitor: kept in URLs sent by default */
const CAMPAIGN = /^(utm_|ref$|source$)/i
const UTM = /^utm_(source|medium|campaign|term|content)$/

/**
 * A URL as it may leave the page: without query parameters other than the campaign ones and
 * without its fragment (both often hold tokens and e-mail addresses), unless `keepQuery`.
 * Undefined for what is not a URL (an empty referrer, a script error without a file).
 */
export function cleanUrl(href: string, keepQuery: boolean): string | undefined {
  let url: URL
  try {
    url = new URL(href)
  } catch {
    return
  }
  if (!keepQuery) {
    for (const key of [...url.searchParams.keys()]) if (!CAMPAIGN.test(key) && !CLICK_ID.test(key)) url.searchParams.delete(key)
    url.hash = ''
  }
  return cut(url.href, MAX.text)
}

/** `utm` and `ad_click_ids` of a page URL's query, each only when present */
export function campaign(search: string): Pick<Event, 'utm' | 'ad_click_ids'> {
  const found: Pick<Event, 'utm' | 'ad_click_ids'> = {}
  new URLSearchParams(search).forEach((value, key) => {
    const utm = UTM.exec(key)
    if (utm) (found.utm ||= {})[utm[1] as 'source'] = cut(value)
    else if (CLICK_ID.test(key)) (found.ad_click_ids ||= {})[cut(key)] = cut(value)
  })
  return found
}
