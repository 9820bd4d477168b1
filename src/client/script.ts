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
import { cut, MAX, properties } from './limits.js'
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

  const commands: Record<string, Command> = {
    track: (name, props) => name != null && send('custom_event', { event_name: cut(name), properties: properties(props) }),
    identify: (id, traits) => {
      if (id == null) return setUserId(null)
      setUserId(cut(id, MAX.string))
      send('identify', { properties: properties(traits) })
    },
    payment: (provider, props) => send('payment', { provider: provider == null ? undefined : cut(provider), properties: properties(props) }),
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
