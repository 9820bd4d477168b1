import { allocateTypes, type EventMix } from './event-mix.js'
import { eventTemplate, SESSION_MARK } from './event-templates.js'
import type { BenchGoal } from './bench-goals.js'

/**
 * Sessions come in classes of CLASSES consecutive session numbers: a class fixes everything about
 * an event but its identity, so the whole stream is CLASSES × steps templates per site, and a
 * session's id is its block number in hex (the template's SESSION_MARK) followed by its class.
 */
export const CLASSES = 100

export interface StreamShape {
  siteIds: readonly string[]
  goals: readonly BenchGoal[]
  mix: EventMix
  /** 1: every event opens a new session */
  eventsPerSession: number
  /** sessions open at a time, a multiple of CLASSES: a session's events lie this many events apart */
  openSessions: number
  /** when set, session numbers wrap around: a pool of this many sessions is reused */
  sessionPool?: number
  /** prefix of every session id: another run never reuses a session */
  run: string
}

/** Where event number `seq` of the stream falls. */
export interface Slot {
  session: number
  step: number
  site: number
  cls: number
}

/**
 * The bench's event stream as a pure function of the event's sequence number. The Lua script of
 * the load generator (bench/lib/wrk-sequence.lua) computes the same mapping; keep them in step.
 */
export class SyntheticStream {
  readonly shape: StreamShape
  readonly #templates: string[]
  /** indices into shape.goals of the goals each template completes */
  readonly #completes: number[][]

  constructor(shape: StreamShape) {
    if (shape.openSessions % CLASSES !== 0 || shape.openSessions <= 0) throw new RangeError(`openSessions must be a positive multiple of ${CLASSES}`)
    this.shape = shape
    const E = shape.eventsPerSession
    const types = allocateTypes(shape.mix, CLASSES * E)
    this.#templates = []
    this.#completes = []
    for (const siteId of shape.siteIds) {
      for (let step = 0; step < E; step++) {
        for (let cls = 0; cls < CLASSES; cls++) {
          const e = eventTemplate({ siteId, type: types[step * CLASSES + cls], cls, step, run: shape.run })
          this.#templates.push(JSON.stringify(e))
          this.#completes.push(shape.goals.flatMap((g, i) => (g.matches(e) ? [i] : [])))
        }
      }
    }
  }

  slot(seq: number): Slot {
    const { eventsPerSession: E, openSessions: W, sessionPool } = this.shape
    const round = E * W
    const i = seq % round
    let session = Math.floor(seq / round) * W + (i % W)
    if (sessionPool) session %= sessionPool
    const cls = session % CLASSES
    return { session, step: Math.floor(i / W), site: Math.floor(session / CLASSES) % this.shape.siteIds.length, cls }
  }

  #index(s: Slot): number {
    return (s.site * this.shape.eventsPerSession + s.step) * CLASSES + s.cls
  }

  /** The JSON body of event `seq`. */
  body(seq: number): string {
    const s = this.slot(seq)
    return this.#templates[this.#index(s)].replaceAll(SESSION_MARK, blockHex(s.session))
  }

  /** A POST /api/events body: events `first` … `first + n − 1`. */
  batchBody(first: number, n: number): string {
    const parts = new Array<string>(n)
    for (let k = 0; k < n; k++) parts[k] = this.body(first + k)
    return `[${parts.join(',')}]`
  }

  siteOf(seq: number): string {
    return this.shape.siteIds[this.slot(seq).site]
  }

  /** indices into shape.goals of the goals event `seq` completes */
  completes(seq: number): readonly number[] {
    return this.#completes[this.#index(this.slot(seq))]
  }

  /** every template in slot order, for a load generator that builds the bodies itself */
  templates(): readonly string[] {
    return this.#templates
  }
}

/** 12 hex digits of a session's block: the part of its id that SESSION_MARK holds. */
export const blockHex = (session: number): string => Math.floor(session / CLASSES).toString(16).padStart(12, '0')
