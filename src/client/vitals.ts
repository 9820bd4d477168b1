/**
 * The web-vitals part (/vitals.js), loaded by the core after itself so that the core stays small.
 * Sends one `web_vitals` a page load, when the page is first hidden (left, closed or switched away
 * from): by then LCP, CLS and INP have their final values.
 */
import { onCLS, onFCP, onINP, onLCP, onTTFB, type Metric } from 'web-vitals'
import type { VitalsScript } from './script.js'

const report = (document.currentScript as VitalsScript | null)?.goalpost
if (report) {
  const measured: Record<string, number> = {}
  const keep = (metric: Metric) => {
    measured[metric.name.toLowerCase()] = metric.value
  }
  // every change is kept, so the values are current whichever listener runs first at hiding
  for (const on of [onCLS, onFCP, onINP, onLCP, onTTFB]) on(keep, { reportAllChanges: true })
  let sent = false
  // the bubbling phase on window comes after web-vitals' own capturing listeners have reported
  addEventListener('visibilitychange', () => {
    if (document.visibilityState != 'hidden' || sent || !Object.keys(measured).length) return
    sent = true
    report(measured)
  })
}
