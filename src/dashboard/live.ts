import type { GoalList } from '../schema/index.js'

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'closed'

export interface LiveHandlers {
  onBody(body: GoalList): void
  onState(state: LiveState, reason?: string): void
  /** the session ended (close code 4401): the page should ask for a login again */
  onLoggedOut(): void
}

/** close codes after which trying again cannot help: 4000 + the HTTP status of the refusal */
const AUTH_CLOSED = 4401
const isRefusal = (code: number) => code >= 4400 && code < 4500

/** Reconnection waits 1 s, 2 s, 4 s … up to 30 s, reset by every successful connection. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))
}

export function liveUrl(location: Pick<Location, 'protocol' | 'host'>, siteId: string, days: number): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${location.host}/api/live?${new URLSearchParams({ site_id: siteId, days: String(days) })}`
}

/**
 * Keeps a WebSocket on `/api/live` open for one site and window, reconnecting after network
 * failures; returns the function that stops it.
 */
export function watchGoals(siteId: string, days: number, h: LiveHandlers): () => void {
  let socket: WebSocket | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  let attempt = 0
  let stopped = false

  const connect = () => {
    h.onState(attempt === 0 ? 'connecting' : 'reconnecting')
    socket = new WebSocket(liveUrl(location, siteId, days))
    socket.onopen = () => {
      attempt = 0
    }
    socket.onmessage = (e) => {
      h.onState('live')
      h.onBody(JSON.parse(String(e.data)) as GoalList)
    }
    socket.onclose = (e) => {
      socket = null
      if (stopped) return
      if (e.code === AUTH_CLOSED) return h.onLoggedOut()
      if (isRefusal(e.code)) return h.onState('closed', e.reason)
      h.onState('reconnecting')
      timer = setTimeout(connect, backoffMs(attempt++))
    }
  }
  connect()
  return () => {
    stopped = true
    clearTimeout(timer)
    socket?.close(1000)
  }
}
