import type { Send } from './event.js'
import { cut, properties } from './limits.js'
import { cleanUrl } from './page-url.js'

const BUTTONS = 'button,input[type=button],input[type=submit],input[type=reset],input[type=image],[role=button]'
const TAGGED = 'data-analytics-event'
const PROP = 'data-analytics-prop-'
const TEXT_MAX = 100

/** a button's visible label, whitespace collapsed, at most 100 characters */
function label(el: Element): string {
  const text = el instanceof HTMLInputElement ? el.value || el.alt : (el as HTMLElement).innerText || el.textContent || ''
  return cut(text.replace(/\s+/g, ' ').trim(), TEXT_MAX)
}

/**
 * Clicks (docs/api.md §7). The nearest ancestor-or-self carrying `data-analytics-event` makes a
 * `custom_event` with its `data-analytics-prop-*` attributes as string properties, and then no
 * `button_click` is sent; otherwise a button makes a `button_click`. A link to another host also
 * makes an `external_link` (middle clicks too: they open it in a new tab).
 */
export function trackClicks(send: Send, keepQuery: boolean): void {
  const link = (target: Element) => {
    const a = target.closest('a[href]')
    if (a instanceof HTMLAnchorElement && /^https?:$/.test(a.protocol) && a.hostname != location.hostname) {
      send('external_link', { url: cleanUrl(a.href, keepQuery) })
    }
  }
  // capture phase: a page handler that stops propagation still leaves the click counted
  document.addEventListener('click', (e) => {
    const target = e.target
    if (!(target instanceof Element)) return
    const tagged = target.closest(`[${TAGGED}]`)
    if (tagged) {
      const name = tagged.getAttribute(TAGGED)
      const props: Record<string, string> = {}
      for (const { name: attr, value } of Array.from(tagged.attributes)) {
        if (attr.startsWith(PROP)) props[attr.slice(PROP.length)] = value
      }
      if (name) send('custom_event', { event_name: cut(name), properties: properties(props) })
    } else {
      const button = target.closest(BUTTONS)
      if (button) send('button_click', { properties: { text: label(button), id: button.id || null } })
    }
    link(target)
  }, true)
  document.addEventListener('auxclick', (e) => {
    if (e.button == 1 && e.target instanceof Element) link(e.target)
  }, true)
}
