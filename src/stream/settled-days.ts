/**
 * The settled days' sets of a partition, in the store rather than in memory.
 *
 * A goal's set of a day before yesterday (in its site's zone) stops changing but for late events,
 * yet drill-down, overlap, funnels and the counts by value read its sessions, and retention keeps
 * ninety of them. So a pass lets a settled day's set and its further completion times go once the
 * store holds them as they are (GoalDays.evict): its size, stamp and the side index of multi-day
 * sessions stay, and every count reads those; so does what funnels read of those sessions. What needs the sessions themselves reads the day
 * back first:
 *
 * - queries and the passes that only read (`readingSettled`): a read that meets such a day throws
 *   DaysNotLoaded, having changed nothing; the days are read back and the question asked again;
 * - the fold (`neededByFold` then `load`): it cannot stop half-way through a batch, so the days its
 *   events may touch (an event's day and its session's span) are read before it starts;
 * - replays, the link across goals, the recount of counts by value: they read their goals' days
 *   back before their synchronous steps (`loadRange`), holding them (`holding`) while they run;
 * - warming a day's joins reads it back for its walk alone (PartitionState.withSettledDay).
 *
 * A day read back stays in memory until a pass has seen it once (an hour or two): the next
 * question over the same window reads memory. `pins` counts the work under way that reads days
 * across awaits; a pass evicts nothing while it is not zero.
 */
import { DAY_MS, DaysNotLoaded, dayOf, type CompletionTimes, type GoalDays } from '../goals/index.js'
import { U64Map } from '../sketch/index.js'
import type { Site } from '../schema/index.js'

/** Reads one goal's set of one day and its further completion times from the store (every stored part joined). */
export type DayReader = (goalId: string, day: number) => Promise<{ set: U64Map; times: CompletionTimes | undefined }>

/** a local day ends no later than 12 h after its UTC namesake (UTC−12) */
const LATEST_END_MS = DAY_MS + 12 * 3_600_000

export class SettledDays {
  /** the partition's goals, whose days these are */
  readonly goals: ReadonlyMap<string, GoalDays>
  /** work under way that reads sets across awaits: no day leaves memory meanwhile */
  pins = 0
  /** snapshots and store writes under way: what they write is not in the store yet */
  writing = 0
  /** how the sets come back; absent, nothing is evicted */
  reader: DayReader | undefined
  /** days read back since the last pass, per goal: that pass leaves them */
  readonly #fresh = new Map<GoalDays, Set<number>>()
  readonly #loading = new Map<string, Promise<void>>()
  #edge = -Infinity
  /** sets read back from the store, since the start */
  loaded = 0
  /** sets let go, since the start */
  evicted = 0

  constructor(goals: ReadonlyMap<string, GoalDays>) {
    this.goals = goals
  }

  /** Runs `work` with the partition's days held: no pass lets one go until it ends. */
  async holding<T>(work: () => T | Promise<T>): Promise<T> {
    this.pins++
    try {
      return await work()
    } finally {
      this.pins--
    }
  }

  /**
   * An instant (epoch ms) at or after which no evicted day begins or ends, in any zone: an event
   * this recent, of a session that began this recently, touches no evicted day.
   */
  get edge(): number {
    return this.#edge
  }

  /**
   * Lets go of the sets of `days` of a goal (settled and written: the caller checked) unless
   * read back since the last pass. Returns how many left memory.
   */
  evict(g: GoalDays, days: readonly number[]): number {
    if (this.reader === undefined) return 0
    const fresh = this.#fresh.get(g)
    let n = 0
    for (const day of days) {
      if (fresh?.has(day) || !g.evict(day)) continue
      n++
      this.#edge = Math.max(this.#edge, day * DAY_MS + LATEST_END_MS)
    }
    this.evicted += n
    return n
  }

  /** Starts a new pass: what was read back before it may leave at the next one. */
  passed(): void {
    this.#fresh.clear()
  }

  /**
   * Reads back the given evicted days of a goal (others are skipped); resolves when they are in
   * memory. `keep`: they stay until a pass has seen them (else the reader lets them go itself).
   */
  async load(goalId: string, days: readonly number[], keep = true): Promise<void> {
    const { reader, goals } = this
    const g = goals.get(goalId)
    if (reader === undefined || g === undefined) return
    const waits: Promise<void>[] = []
    for (const day of days) {
      if (!g.isStored(day)) continue
      const key = `${goalId}\n${day}`
      let loading = this.#loading.get(key)
      if (loading === undefined) {
        loading = reader(goalId, day).then(({ set, times }) => {
          // the goal deleted, re-bucketed or the day dropped meanwhile: `load` takes nothing then
          if (goals.get(goalId) !== g || !g.load(day, set, times)) return
          this.loaded++
          if (!keep) return
          let fresh = this.#fresh.get(g)
          if (fresh === undefined) this.#fresh.set(g, (fresh = new Set()))
          fresh.add(day)
        }).finally(() => this.#loading.delete(key))
        this.#loading.set(key, loading)
      }
      waits.push(loading)
    }
    await Promise.all(waits)
  }

  /** Reads back every evicted day in [fromDay, toDay] of the given goals. */
  async loadRange(goalIds: readonly string[], fromDay = -Infinity, toDay = Infinity): Promise<void> {
    await Promise.all(goalIds.map((id) => this.load(id, this.goals.get(id)?.storedDays(fromDay, toDay) ?? [])))
  }
}

/**
 * Runs `fn` until it answers without meeting an evicted day of the partitions' goals, reading back
 * the days it met between tries. `fn` must change nothing before it throws, or only what a second
 * run joins again (the queries' caches, kept under stamps). Days stay in memory while it runs.
 */
export async function readingSettled<T>(parts: readonly { readonly settled: SettledDays }[], fn: () => T | Promise<T>): Promise<T> {
  for (const p of parts) p.settled.pins++
  try {
    for (;;) {
      try {
        return await fn()
      } catch (err) {
        if (!(err instanceof DaysNotLoaded)) throw err
        const at = parts.find((p) => idOf(p.settled.goals, err.goal) !== undefined)?.settled
        const id = at === undefined ? undefined : idOf(at.goals, err.goal)
        // a goal deleted while the question ran: its answer is not asked again
        if (at === undefined || id === undefined) throw err
        await at.load(id, err.days)
        // nothing read back (no reader): asking again would meet the same days
        if (err.days.some((d) => at.goals.get(id)?.isStored(d))) throw err
      }
    }
  } finally {
    for (const p of parts) p.settled.pins--
  }
}

function idOf(goals: ReadonlyMap<string, GoalDays>, g: GoalDays): string | undefined {
  for (const [id, held] of goals) if (held === g) return id
  return undefined
}

const NOTHING: ReadonlyMap<string, readonly number[]> = new Map()

/** What the fold needs of an event: its session's hash, time and site. */
interface FoldEvent {
  hashHi: number
  hashLo: number
  ts: number
  site_id: string
}

/** Where the fold keeps a session's first and last event (the session table). */
interface Spans {
  slotOf(hi: number, lo: number): number
  first(slot: number): number
  last(slot: number): number
}

/**
 * The evicted days a batch's fold may read, per goal: for an event older than the edge, or of a
 * session that began before it, every day of the session's span as the batch leaves it (the fold
 * records the event's day and looks for the session's other days there) in every goal of its
 * site. Empty, after one comparison an event, for a batch of recent sessions.
 */
export function neededByFold(
  edge: number,
  events: readonly (FoldEvent | undefined)[],
  spans: Spans,
  sites: ReadonlyMap<string, Site>,
  goalIdsOf: (siteId: string) => readonly string[],
  goals: ReadonlyMap<string, GoalDays>,
): ReadonlyMap<string, readonly number[]> {
  if (edge === -Infinity) return NOTHING
  /** the sessions touching old days, each with its index in from/to */
  let old: U64Map | undefined
  for (const e of events) {
    if (e === undefined) continue
    let first = e.ts
    if (first >= edge) {
      const slot = spans.slotOf(e.hashHi, e.hashLo)
      if (slot >= 0) first = spans.first(slot)
    }
    if (first < edge) (old ??= new U64Map()).set(e.hashHi, e.hashLo, 0)
  }
  if (old === undefined) return NOTHING
  const out = new Map<string, number[]>()
  // every event of those sessions in the batch widens their spans, in whatever order they come
  const from: number[] = []
  const to: number[] = []
  const siteOf: string[] = []
  for (const e of events) {
    if (e === undefined || !old.has(e.hashHi, e.hashLo)) continue
    let at = old.get(e.hashHi, e.hashLo)!
    if (at === 0) {
      at = from.length + 1
      old.set(e.hashHi, e.hashLo, at)
      const slot = spans.slotOf(e.hashHi, e.hashLo)
      from.push(slot >= 0 ? spans.first(slot) : e.ts)
      to.push(slot >= 0 ? spans.last(slot) : e.ts)
      siteOf.push(e.site_id)
    }
    from[at - 1] = Math.min(from[at - 1], e.ts)
    to[at - 1] = Math.max(to[at - 1], e.ts)
  }
  for (let i = 0; i < from.length; i++) {
    const site = sites.get(siteOf[i])
    if (site === undefined) continue
    const fromDay = dayOf(from[i], site.timezone)
    const toDay = dayOf(to[i], site.timezone)
    for (const id of goalIdsOf(site.site_id)) {
      const days = goals.get(id)?.storedDays(fromDay, toDay)
      if (!days?.length) continue
      const held = out.get(id)
      if (held === undefined) out.set(id, days)
      else for (const d of days) if (!held.includes(d)) held.push(d)
    }
  }
  return out
}
