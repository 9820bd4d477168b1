/**
 * For tests of several nodes in one Kafka group: the exact answer for what was acknowledged, a
 * stream of batches through a node, and a watcher that polls the goals answer of every node and
 * checks that no answer is ever lower than one already given.
 */
import { randomBytes, randomInt } from 'node:crypto'
import type { Test } from 'tap'
import { customEvent, daysAgo, pageview, type EventBody } from './fixtures.js'
import type { GoalsAnswer } from './api.js'
import { sleep, type Server } from './server.js'

/** The environment of one Kafka cluster of nodes: its own topics and group, one admin token. */
export function clusterEnv(brokers: string[], extra: Record<string, string> = {}): Record<string, string> {
  return {
    GOALPOST_LOG: 'kafka',
    GOALPOST_KAFKA_BROKERS: brokers.join(','),
    GOALPOST_KAFKA_PREFIX: `cluster-${randomBytes(4).toString('hex')}`,
    GOALPOST_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    GOALPOST_EXACT_THRESHOLD: '100000',
    ...extra,
  }
}

export interface GoalMatcher {
  id: string
  matches(e: EventBody): boolean
}

export interface Expected {
  total: number
  conversions: Map<string, number>
}

/** Every acknowledged event, and the exact answer for them: distinct sessions, and per goal the sessions that matched. */
export class Truth {
  readonly #sessions = new Set<string>()
  readonly #converted = new Map<string, Set<string>>()
  readonly #goals: GoalMatcher[]

  constructor(goals: GoalMatcher[]) {
    this.#goals = goals
    for (const g of goals) this.#converted.set(g.id, new Set())
  }

  add(events: EventBody[]): void {
    for (const e of events) {
      const s = String(e.session_id)
      this.#sessions.add(s)
      for (const g of this.#goals) if (g.matches(e)) this.#converted.get(g.id)!.add(s)
    }
  }

  expected(): Expected {
    return { total: this.#sessions.size, conversions: new Map([...this.#converted].map(([id, set]) => [id, set.size])) }
  }
}

export const exactly = (a: GoalsAnswer | undefined, want: Expected): boolean =>
  a !== undefined && a.total_sessions === want.total && a.goals.every((g) => g.conversions === want.conversions.get(g.id))

export const describe = (a: GoalsAnswer | undefined): string =>
  a === undefined ? 'no answer' : `${a.total_sessions} sessions, conversions ${a.goals.map((g) => g.conversions).join('/')}`

export const describeExpected = (want: Expected): string => `${want.total} sessions, conversions ${[...want.conversions.values()].join('/')}`

/**
 * Batches of a site's traffic: new sessions and returns of earlier ones (whose summaries another
 * node may have written), pageviews of `/` and `/buy/<n>` today, some `/buy` pageviews yesterday (a
 * session converting on two days), and `signup` events.
 */
export class Traffic {
  readonly #site: string
  readonly #tag: string
  readonly #sessions: string[] = []
  #next = 0

  constructor(site: string, tag: string) {
    this.#site = site
    this.#tag = tag
  }

  batch(size: number): EventBody[] {
    const events: EventBody[] = []
    for (let i = 0; i < size; i++) {
      let session: string
      if (this.#sessions.length > 0 && i % 3 === 0) session = this.#sessions[randomInt(this.#sessions.length)]!
      else this.#sessions.push((session = `${this.#tag}-${this.#next++}`))
      events.push(pageview(this.#site, session, '/'))
      const r = randomInt(100)
      if (r < 30) events.push(pageview(this.#site, session, `/buy/${r}`))
      if (r < 10) events.push(pageview(this.#site, session, `/buy/${r}`, { timestamp: daysAgo(1) }))
      if (r >= 75) events.push(customEvent(this.#site, session, 'signup'))
    }
    return events
  }
}

export interface Pump {
  /** stops sending; resolves once the batch under way is answered */
  stop(): Promise<void>
  /** answers other than 202, with the node that gave them */
  readonly refused: string[]
}

/** Sends a batch of `size` through the node every `everyMs` until stopped; what is acknowledged goes to `truth`. */
export function pump(node: Server, traffic: Traffic, truth: Truth, size = 30, everyMs = 100): Pump {
  let sending = true
  const refused: string[] = []
  const loop = (async () => {
    while (sending) {
      const batch = traffic.batch(size)
      const reply = await node.request('POST', '/api/events', { token: node.adminToken, body: batch, timeoutMs: 30_000 }).catch((err: unknown) => err as Error)
      if (reply instanceof Error) refused.push(`${node.url}: ${reply.message}`)
      else if (reply.status === 202) truth.add(batch)
      else refused.push(`${node.url}: ${reply.status} ${reply.text.slice(0, 200)}`)
      await sleep(everyMs)
    }
  })()
  return {
    refused,
    stop: async () => {
      sending = false
      await loop
    },
  }
}

interface Observation {
  node: string
  start: number
  end: number
  status: number
  values: number[]
}

export interface Watcher {
  /** stops polling and resolves once the polls under way are answered */
  stop(): Promise<void>
  /**
   * Checks that no 200 answer was lower (in total sessions or any goal's conversions) than an
   * answer that had been given, by any node, before it was asked for; 503s are allowed.
   */
  check(t: Test): void
}

/**
 * Polls GET /api/goals on every node `nodes()` names (a paused node should not be named: its
 * answers would only wait) every `everyMs`.
 */
export function watchAnswers(nodes: () => Server[], site: string, goalIds: string[], days = 7, everyMs = 150): Watcher {
  const seen: Observation[] = []
  let polling = true
  const running = new Set<Promise<void>>()
  const poll = async (node: Server) => {
    const start = Date.now()
    const reply = await node.request('GET', `/api/goals?site_id=${encodeURIComponent(site)}&days=${days}`, { token: node.adminToken, timeoutMs: 20_000 }).catch(() => undefined)
    if (reply === undefined) return
    const a = reply.json as GoalsAnswer | undefined
    const values = reply.status === 200 && a ? [a.total_sessions, ...goalIds.map((id) => a.goals.find((g) => g.id === id)?.conversions ?? -1)] : []
    seen.push({ node: node.url, start, end: Date.now(), status: reply.status, values })
  }
  const busy = new Set<string>()
  const loop = (async () => {
    while (polling) {
      for (const node of nodes()) {
        if (busy.has(node.url)) continue
        busy.add(node.url)
        const job = poll(node).finally(() => {
          busy.delete(node.url)
          running.delete(job)
        })
        running.add(job)
      }
      await sleep(everyMs)
    }
  })()
  return {
    stop: async () => {
      polling = false
      await loop
      await Promise.all(running)
    },
    check: (t: Test) => {
      const ok = seen.filter((o) => o.status === 200)
      const statuses = new Map<number, number>()
      for (const o of seen) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1)
      const ms = ok.map((o) => o.end - o.start).sort((x, y) => x - y)
      t.comment(`answers polled: ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}; 200s took ${ms[Math.floor(ms.length / 2)] ?? 0} ms (median), ${ms.at(-1) ?? 0} ms at most`)
      t.same([...statuses.keys()].filter((s) => s !== 200 && s !== 503), [], 'every polled answer was 200 or 503')
      const byEnd = [...ok].sort((x, y) => x.end - y.end)
      const lower: string[] = []
      for (const o of ok) {
        for (const before of byEnd) {
          if (before.end >= o.start) break
          const i = before.values.findIndex((v, k) => o.values[k] < v)
          if (i >= 0) {
            lower.push(`${o.node} at +${o.start - byEnd[0].start} ms answered ${o.values.join('/')} after ${before.node} had answered ${before.values.join('/')}`)
            break
          }
        }
        if (lower.length >= 5) break
      }
      t.same(lower, [], `no answer lower than one already given (${ok.length} answers of 200)`)
    },
  }
}
