/** What the <script> tag says (docs/api.md §7), read once when the script runs. */
export interface Settings {
  site: string | null
  /** where events are posted: `<data-api>/api/event` */
  endpoint: string
  /** the script's own URL: vitals.js is fetched from beside it */
  src: string
  keepQuery: boolean
  /** `data-visitor="none"`: no visitor id, nothing in localStorage */
  noVisitor: boolean
  respectDnt: boolean
}

export function readSettings(script: HTMLScriptElement | null): Settings {
  const attr = (name: string) => script && script.getAttribute('data-' + name)
  const src = (script && script.src) || location.href
  // the script's URL without its file name, so a service behind a path prefix works
  const base = attr('api') || new URL('.', src).href
  return {
    site: attr('site-id'),
    endpoint: base.replace(/\/*$/, '/api/event'),
    src,
    keepQuery: attr('keep-query') != null,
    noVisitor: attr('visitor') == 'none',
    respectDnt: attr('respect-dnt') != null,
  }
}

/** Do Not Track or Global Privacy Control is on */
export const privacyAsked = (): boolean =>
  navigator.doNotTrack == '1' || (window as { doNotTrack?: string }).doNotTrack == '1' || !!(navigator as { globalPrivacyControl?: boolean }).globalPrivacyControl
