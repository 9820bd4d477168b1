import type { Socket } from '../http/index.js'
import type { GoalList, Site } from '../schema/index.js'

/** The goals answer of a site over a window: the one source of every live body. */
export type GoalsOf = (site: Site, days: number) => Promise<GoalList>

/** Why a socket is closed: a WebSocket close code and a reason sentence. */
export interface Closing {
  code: number
  reason: string
}

export interface LiveHubOptions {
  goals: GoalsOf
  /** the current record of a site (its time zone may change while sockets watch it) */
  siteOf(siteId: string): Site | undefined
  onError(err: unknown): void
  /** how often bodies are recomputed (default 1000 ms) */
  intervalMs?: number
  /** least time between two messages on one socket (docs/api.md §8: at most once a second) */
  minGapMs?: number
  /** a socket holding more unsent bytes than this is dropped (default 1 MiB) */
  maxBufferedBytes?: number
  now?: () => number
}

interface Watch {
  socket: Socket
  key: string
  /** still allowed? re-asked every tick: a logout, a revoked key or lost access ends the socket */
  check: () => Closing | null
  lastBody: string | null
  lastSentAt: number
  pending: string | null
  timer: NodeJS.Timeout | null
}

interface Group {
  siteId: string
  days: number
  watches: Set<Watch>
}

export const SITE_GONE = 4404

/**
 * Keeps every live socket's goals body current. Sockets watching the same site and window form a
 * group whose body is computed and encoded once per tick (and shared by joins arriving meanwhile),
 * so the cost grows with distinct (site, days) pairs, not with sockets. A socket gets a message only
 * when its encoded body changed, never sooner than `minGapMs` after its previous one: a change
 * inside the gap is held and sent when the gap ends (the newest body wins).
 */
export class LiveHub {
  readonly #opts: Required<Omit<LiveHubOptions, 'now'>> & { now: () => number }
  readonly #groups = new Map<string, Group>()
  readonly #watches = new Map<Socket, Watch>()
  readonly #inflight = new Map<string, Promise<string | null>>()
  #timer: NodeJS.Timeout | null = null
  #running = false

  constructor(opts: LiveHubOptions) {
    this.#opts = { intervalMs: 1000, minGapMs: 1000, maxBufferedBytes: 1024 * 1024, now: () => performance.now(), ...opts }
  }

  /** sockets watching */
  get size(): number {
    return this.#watches.size
  }

  /** Sends the current body at once, then keeps the socket current until it leaves. */
  async join(socket: Socket, siteId: string, days: number, check: () => Closing | null): Promise<void> {
    const key = `${days} ${siteId}`
    const watch: Watch = { socket, key, check, lastBody: null, lastSentAt: 0, pending: null, timer: null }
    const body = await this.#body(siteId, days)
    if (socket.closed) return
    if (body === null) return socket.end(SITE_GONE, `site ${siteId} not found`)
    let group = this.#groups.get(key)
    if (!group) this.#groups.set(key, (group = { siteId, days, watches: new Set() }))
    group.watches.add(watch)
    this.#watches.set(socket, watch)
    this.#send(watch, body)
  }

  leave(socket: Socket): void {
    const watch = this.#watches.get(socket)
    if (!watch) return
    this.#watches.delete(socket)
    if (watch.timer) clearTimeout(watch.timer)
    const group = this.#groups.get(watch.key)
    group?.watches.delete(watch)
    if (group?.watches.size === 0) this.#groups.delete(watch.key)
  }

  /** One round: re-check every socket's access, recompute each group's body once, deliver changes. */
  async tick(): Promise<void> {
    for (const watch of [...this.#watches.values()]) {
      const closing = watch.check()
      if (closing) this.#close(watch, closing)
    }
    await Promise.all([...this.#groups.entries()].map(async ([key, group]) => {
      let body: string | null
      try {
        body = await this.#body(group.siteId, group.days)
      } catch (err) {
        // this group keeps its last body until a later tick succeeds; the others go on
        return this.#opts.onError(err)
      }
      const current = this.#groups.get(key)
      if (!current) return
      for (const watch of [...current.watches]) {
        if (body === null) this.#close(watch, { code: SITE_GONE, reason: `site ${group.siteId} not found` })
        else this.#deliver(watch, body)
      }
    }))
  }

  /** Ticks every `intervalMs`, never two at once: a slow round delays the next. */
  start(): void {
    if (this.#running) return
    this.#running = true
    const loop = async () => {
      const started = this.#opts.now()
      await this.tick().catch((err) => this.#opts.onError(err))
      if (!this.#running) return
      this.#timer = setTimeout(() => void loop(), Math.max(0, this.#opts.intervalMs - (this.#opts.now() - started)))
      this.#timer.unref()
    }
    this.#timer = setTimeout(() => void loop(), this.#opts.intervalMs)
    this.#timer.unref()
  }

  stop(): void {
    this.#running = false
    if (this.#timer) clearTimeout(this.#timer)
    for (const watch of [...this.#watches.values()]) this.#close(watch, { code: 1001, reason: 'server stopping' })
  }

  /** the encoded body of a group, or null for a site that is gone; one computation at a time per group */
  #body(siteId: string, days: number): Promise<string | null> {
    const key = `${days} ${siteId}`
    let p = this.#inflight.get(key)
    if (p) return p
    p = (async () => {
      const site = this.#opts.siteOf(siteId)
      return site ? JSON.stringify(await this.#opts.goals(site, days)) : null
    })()
    this.#inflight.set(key, p)
    const clear = () => this.#inflight.delete(key)
    p.then(clear, clear)
    return p
  }

  #deliver(watch: Watch, body: string): void {
    if (body === watch.lastBody) {
      // changed and changed back inside the gap: nothing left to tell
      watch.pending = null
      if (watch.timer) clearTimeout(watch.timer)
      watch.timer = null
      return
    }
    const wait = watch.lastSentAt + this.#opts.minGapMs - this.#opts.now()
    if (wait <= 0) return this.#send(watch, body)
    watch.pending = body
    watch.timer ??= setTimeout(() => {
      watch.timer = null
      const pending = watch.pending
      watch.pending = null
      if (pending !== null && this.#watches.get(watch.socket) === watch) this.#send(watch, pending)
    }, Math.ceil(wait))
  }

  #send(watch: Watch, body: string): void {
    const { socket } = watch
    // a reader this far behind is not coming back: drop it rather than hold its backlog
    if (socket.bufferedAmount() > this.#opts.maxBufferedBytes || socket.send(body) === 'dropped') {
      this.leave(socket)
      return socket.destroy()
    }
    watch.lastBody = body
    watch.lastSentAt = this.#opts.now()
  }

  #close(watch: Watch, closing: Closing): void {
    this.leave(watch.socket)
    watch.socket.end(closing.code, closing.reason)
  }
}
