/**
 * The browser client (docs/api.md §7), served as /script.js:
 *
 *   <script defer src="https://goalpost.example/script.js" data-site-id="shop"></script>
 *
 * Calls made before it loads go to the queue stub
 *   window.goalpost = window.goalpost || function(){(goalpost.q=goalpost.q||[]).push(arguments)}
 * and are replayed, in order, after the first pageview.
 */
import { sender, type View } from './event.js'
import { useStorage, setUserId } from './ids.js'
import { trackClicks } from './clicks.js'
import { trackCopies } from './copies.js'
import { trackErrors } from './errors.js'
import { trackForms } from './forms.js'
import { cut, MAX, properties, revenue } from './limits.js'
import { trackViews } from './page-views.js'
import { privacyAsked, readSettings } from './settings.js'

type Command = (...args: unknown[]) => unknown
interface Goalpost {
  (command: string, ...args: unknown[]): void
  q?: ArrayLike<unknown>[]
  track?: Command
}

declare global {
  interface Window {
    goalpost?: Goalpost
  }
}

/** the element web-vitals' part reads its report function from */
export interface VitalsScript extends HTMLScriptElement {
  goalpost?: (vitals: Record<string, number>) => void
}

const existing = window.goalpost
// a second copy of the tag must not count everything twice
if (!existing?.track) {
  const script = (document.currentScript || document.querySelector('script[data-site-id]')) as HTMLScriptElement | null
  const settings = readSettings(script)
  const blocked = !settings.site || (settings.respectDnt && privacyAsked())
  if (!blocked) useStorage(!settings.noVisitor)
  const view: View = { path: '', start: 0 }
  const send = sender(settings, view, blocked)

  /** a third argument's revenue and event_id (an id lets the server count a retried purchase once) */
  const options = (o: unknown, r?: unknown) => {
    const { revenue: given, event_id: id } = (o || {}) as { revenue?: unknown; event_id?: unknown }
    return { revenue: revenue(given || r), event_id: id == null ? undefined : cut(id, 128) }
  }
  const commands: Record<string, Command> = {
    track: (name, props, o) => name != null && send('custom_event', { event_name: cut(name), properties: properties(props), ...options(o) }),
    identify: (id, traits) => {
      if (id == null) return setUserId(null)
      setUserId(cut(id, MAX.string))
      send('identify', { properties: properties(traits) })
    },
    // the amount and currency stay in properties too, where they were before revenue existed
    payment: (provider, props, o) => send('payment', { provider: provider == null ? undefined : cut(provider), properties: properties(props), ...options(o, props) }),
  }
  const goalpost: Goalpost = Object.assign((command: string, ...args: unknown[]) => commands[command]?.(...args), commands)
  window.goalpost = goalpost

  trackViews(send, view, settings.keepQuery)
  trackClicks(send, settings.keepQuery)
  trackForms(send)
  trackCopies(send)
  trackErrors(send, settings.keepQuery)
  for (const args of existing?.q || []) goalpost(...(Array.from(args) as [string, ...unknown[]]))

  if (!blocked && script?.src) {
    const vitals = document.createElement('script') as VitalsScript
    vitals.src = new URL('vitals.js', settings.src).href
    vitals.goalpost = (measured) => send('web_vitals', { vitals: measured })
    document.head.appendChild(vitals)
  }
}
