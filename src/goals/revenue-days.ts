/**
 * One goal's revenue in one partition (docs/api.md §9.2): every matching event that carried
 * revenue, keyed by its identity — the session's hash and the event's `event_id`, or without one
 * the event's position in the log, which replays see again unchanged. The value is the amount in
 * the goal's currency, in 1/10 000 units, or OTHER for revenue in another currency.
 *
 * Every update is a join, so replays, backfills and restarts never count an event twice:
 * - an event on two days (a retried purchase sent again after midnight) lies on the earlier day;
 * - two amounts of one identity keep the larger, and any amount in the goal's currency beats OTHER.
 * Per day, totals are kept beside the entries so a window costs O(days).
 */
export const OTHER = -1n

export interface RevenueTotals {
  /** sum of amounts in the goal's currency, in units */
  total: bigint
  /** entries in the goal's currency */
  events: number
  /** entries in other currencies */
  other: number
}

interface Entry {
  day: number
  amount: bigint
}

const emptyTotals = (): RevenueTotals => ({ total: 0n, events: 0, other: 0 })

function add(t: RevenueTotals, amount: bigint, sign: 1 | -1): void {
  if (amount === OTHER) t.other += sign
  else {
    t.events += sign
    t.total += sign === 1 ? amount : -amount
  }
}

/** An event's identity within a partition: session hash in hex plus `i<event_id>` or `o<offset>`. */
export const revenueKey = (sessionHex: string, eventId: string | undefined, offset: number): string =>
  eventId === undefined ? `${sessionHex}o${offset}` : `${sessionHex}i${eventId}`

export class RevenueDays {
  readonly #entries = new Map<string, Entry>()
  readonly #days = new Map<number, { keys: Set<string>; totals: RevenueTotals }>()

  get size(): number {
    return this.#entries.size
  }

  /** Joins one event's revenue on `day`; returns the days whose content changed (none: nothing did). */
  record(key: string, day: number, amount: bigint): number[] {
    const had = this.#entries.get(key)
    if (had === undefined) {
      this.#entries.set(key, { day, amount })
      this.#put(day, key, amount)
      return [day]
    }
    const nextDay = Math.min(had.day, day)
    const nextAmount = had.amount > amount ? had.amount : amount
    if (nextDay === had.day && nextAmount === had.amount) return []
    const oldDay = had.day
    this.#take(oldDay, key, had.amount)
    had.day = nextDay
    had.amount = nextAmount
    this.#put(nextDay, key, nextAmount)
    return oldDay === nextDay ? [nextDay] : [oldDay, nextDay]
  }

  #put(day: number, key: string, amount: bigint): void {
    let d = this.#days.get(day)
    if (!d) this.#days.set(day, (d = { keys: new Set(), totals: emptyTotals() }))
    d.keys.add(key)
    add(d.totals, amount, 1)
  }

  #take(day: number, key: string, amount: bigint): void {
    const d = this.#days.get(day)!
    d.keys.delete(key)
    add(d.totals, amount, -1)
    if (d.keys.size === 0) this.#days.delete(day)
  }

  /** The totals over days `from`..`to` inclusive. */
  totals(from: number, to: number): RevenueTotals {
    const out = emptyTotals()
    for (const [day, d] of this.#days) {
      if (day < from || day > to) continue
      out.total += d.totals.total
      out.events += d.totals.events
      out.other += d.totals.other
    }
    return out
  }

  days(): number[] {
    return [...this.#days.keys()]
  }

  /** a day's entries as [key, amount] pairs, for a snapshot (empty: the day is gone) */
  dayEntries(day: number): [string, bigint][] {
    const d = this.#days.get(day)
    if (!d) return []
    return [...d.keys].map((k) => [k, this.#entries.get(k)!.amount])
  }

  /** Drops days before `minDay` (retention), with their entries. */
  dropBefore(minDay: number): number[] {
    const dropped: number[] = []
    for (const [day, d] of this.#days) {
      if (day >= minDay) continue
      for (const k of d.keys) this.#entries.delete(k)
      this.#days.delete(day)
      dropped.push(day)
    }
    return dropped
  }

  clear(): void {
    this.#entries.clear()
    this.#days.clear()
  }
}
