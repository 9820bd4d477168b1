import WebSocket from 'ws'
import type { Server } from './server.js'

export interface LiveMessage {
  /** performance.now() when it arrived */
  at: number
  body: any
  text: string
}

export interface LiveClient {
  readonly messages: LiveMessage[]
  /** resolves with the close code and reason once the server (or the client) closed the socket */
  readonly closed: Promise<{ code: number; reason: string }>
  /** the first message at index >= `from` that satisfies `until`; rejects after `timeoutMs` */
  next(until: (m: LiveMessage) => boolean, from?: number, timeoutMs?: number): Promise<LiveMessage>
  close(): void
}

/**
 * Opens `WS /api/live` with the given query and handshake headers (Cookie, Origin…) and records
 * every message with its arrival time. Closed at teardown.
 */
export function openLive(server: Server, params: Record<string, string | number>, headers: Record<string, string> = {}, t?: { teardown(fn: () => unknown): void }): LiveClient {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/live?${query}`, { headers })
  const messages: LiveMessage[] = []
  const waiters = new Set<() => void>()
  ws.on('message', (data) => {
    const text = (data as Buffer).toString()
    messages.push({ at: performance.now(), body: JSON.parse(text), text })
    for (const w of waiters) w()
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) })
      for (const w of waiters) w()
    })
    ws.on('error', () => undefined)
  })
  t?.teardown(() => ws.close())

  const next = (until: (m: LiveMessage) => boolean, from = 0, timeoutMs = 5000) =>
    new Promise<LiveMessage>((resolve, reject) => {
      const check = () => {
        const hit = messages.slice(from).find(until)
        if (hit) return done(() => resolve(hit))
        if (ws.readyState === WebSocket.CLOSED) done(() => reject(new Error(`socket closed before the expected message (${messages.length} messages)`)))
      }
      const timer = setTimeout(() => done(() => reject(new Error(`no such message within ${timeoutMs} ms (${messages.length} messages: ${messages.map((m) => m.text.slice(0, 200)).join(' | ')})`))), timeoutMs)
      const done = (settle: () => void) => {
        clearTimeout(timer)
        waiters.delete(check)
        settle()
      }
      waiters.add(check)
      check()
    })

  return { messages, closed, next, close: () => ws.close() }
}
