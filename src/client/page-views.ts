import type { Send, View } from './event.js'
import { cleanUrl } from './page-url.js'

/**
 * `pageview` on load and on every path change of an SPA (history.pushState/replaceState, popstate);
 * `pageleave` with the milliseconds on the page when the path changes, the page is left, or the tab
 * is hidden. A tab shown again starts counting anew, so a later pageleave reports the new stretch.
 */
export function trackViews(send: Send, view: View, keepQuery: boolean): void {
  let left = false
  const leave = () => {
    if (left) return
    left = true
    send('pageleave', { url: view.url, path: view.path, duration: Date.now() - view.start })
  }
  const show = (referrer: string | undefined) => {
    view.url = cleanUrl(location.href, keepQuery)
    view.path = location.pathname
    view.referrer = referrer
    view.start = Date.now()
    left = false
    send('pageview')
  }
  // after an SPA navigation the referrer is the page the visitor came from inside the app
  const navigated = () => {
    if (location.pathname == view.path) return
    leave()
    show(view.url)
  }
  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method].bind(history)
    history[method] = (...args: Parameters<History['pushState']>) => {
      original(...args)
      navigated()
    }
  }
  addEventListener('popstate', navigated)
  addEventListener('pagehide', leave)
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState == 'hidden') leave()
    else if (left) {
      left = false
      view.start = Date.now()
    }
  })
  show(cleanUrl(document.referrer, keepQuery))
}
