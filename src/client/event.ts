import type { Event, EventType } from '../schema/index.js'
import { sessionId, userId, visitorId } from './ids.js'
import { cut, MAX } from './limits.js'
import { campaign, cleanUrl } from './page-url.js'
import type { Settings } from './settings.js'
import { post } from './transport.js'

/** what an event adds to the fields every event carries; never a timestamp (docs/api.md §7) */
export type Extra = Partial<Omit<Event, 'type' | 'site_id' | 'session_id' | 'timestamp'>>
export type Send = (type: EventType, extra?: Extra) => void

/** The page view the events belong to: set on each pageview, read by every event. */
export interface View {
  url?: string
  path: string
  referrer?: string
  /** when the view started, or last became visible again */
  start: number
}

/**
 * The sender: every event gets site, session, visitor and user, the page, the browser and the
 * campaign; `extra` may override them (a pageleave names the page it leaves, an external_link its target).
 */
export function sender(settings: Settings, view: View, blocked: boolean): Send {
  return (type, extra) => {
    if (blocked) return
    const user = userId()
    const event: Omit<Event, 'timestamp'> = {
      type,
      site_id: settings.site!,
      session_id: sessionId(),
      visitor_id: settings.noVisitor ? undefined : visitorId(),
      user_id: user,
      url: cleanUrl(location.href, settings.keepQuery),
      path: cut(location.pathname, MAX.path),
      hostname: cut(location.hostname),
      title: cut(document.title, MAX.text),
      referrer: view.referrer,
      language: cut(navigator.language),
      user_agent: cut(navigator.userAgent, MAX.text),
      screen: { width: screen.width, height: screen.height, viewport_width: innerWidth, viewport_height: innerHeight, pixel_ratio: devicePixelRatio },
      ...campaign(location.search),
      ...extra,
    }
    post(settings.endpoint, event)
  }
}
