import { Level } from 'level'
import { U64Map, type SessionCounter } from '../sketch/index.js'
import { K, STATE_KINDS, range } from './keys.js'
import { sliceDue, turnDue } from './encode-slices.js'
import { layoutOf, takesDelta, wroteDelta, wroteWhole, type DayLayout, type GoalLayouts, type Layouts } from './day-layout.js'
import { putDeadLetter, readDeadLetters, type DeadLetter } from './dead-letters.js'
import type { SessionSummary } from '../schema/index.js'
import type { CompletionTimes, MultiDayEntry } from '../goals/index.js'
import { parseValueKey, valueKey, type Dirty, type DroppedKeys, type PartitionImage } from './partition-image.js'
import { decodeSummary, encodeSummary, encodeSummaryView, lastOfSummary } from './summary-v1.js'
import { decodeCompletionTimes, encodeCompletionTimes } from './times-v1.js'
import {
  decodeGoalDay, decodeMultiDay, decodeRevenueDay, decodeSessionCounter, decodeTopK,
  GoalDayEncoder, encodeGoalDay, encodeMultiDay, encodeRevenueDay, encodeSessionCounter, encodeTopK,
} from './snapshot-v1.js'

/**
 * LevelDB's memtable: 16 MiB, not 4. Under new sessions at saturation a snapshot writes ~20 MB of
 * summaries every 10 s; with 4 MiB each one became five level-0 files and the compactions after them.
 */
const WRITE_BUFFER_BYTES = 16 * 1024 * 1024

export type Op = { type: 'put'; key: string; value: Buffer } | { type: 'del'; key: string }

/**
 * A replay of a partition's retained log that rebuilds part of its state: `goal:<id>` counts a new
 * goal (goals are retroactive), `site:<id>` re-buckets a site whose time zone changed. Below
 * `until` the replay counts; from it on the live fold does. `done` is written in the same batch as
 * the state it produced, so a crash before that reruns the replay.
 */
export interface ReplayRecord {
  id: string
  until: number
  done: boolean
}

/** What a partition's restore needs besides its state: replays and the zones its days are in. */
export interface PartitionMeta {
  replays: Map<string, ReplayRecord>
  zones: Map<string, string>
}

export class StateStore {
  readonly #db: Level<string, Buffer>
  /** per partition: the layout of each goal's days, and the next delta's number */
  readonly #layouts = new Map<number, Layouts>()

  private constructor(db: Level<string, Buffer>) {
    this.#db = db
  }

  static async open(dir: string): Promise<StateStore> {
    const db = new Level<string, Buffer>(dir, { valueEncoding: 'buffer', writeBufferSize: WRITE_BUFFER_BYTES })
    await db.open()
    return new StateStore(db)
  }

  close(): Promise<void> {
    return this.#db.close()
  }

  /**
   * Restores everything but the summaries (read on demand) into an empty partition state.
   * `settled(goal, day)`: whether a goal's day has stopped changing; such a day's set leaves memory
   * as soon as it is read (PartitionImage.letGo), so a restore holds one settled day at a time.
   */
  async loadPartition(state: PartitionImage, settled: (goal: string, day: number) => boolean = () => false): Promise<PartitionMeta> {
    const p = state.partition
    const offset = await this.#db.get(K.offset(p))
    state.offset = offset === undefined ? 0 : Number(offset.toString())
    // an empty store has nothing to link; one written by a build that kept no links has no mark
    state.linkedAcross = offset === undefined || (await this.#db.get(K.linked(p))) !== undefined
    this.#layouts.delete(p)
    const layouts = this.#layoutsOf(p)
    /** reads a kind of keys stored as a base and deltas (`<kind>!<p>!<goal>[!<at>][!<seq>]`), joining each part as it comes */
    const loadParts = async (kind: 'g' | 'q' | 'x' | 'm', into: GoalLayouts, join: (goal: string, at: number, value: Buffer) => number): Promise<void> => {
      for await (const [key, value] of this.#db.iterator(range(`${kind}!${p}!`))) {
        const parts = key.split('!')
        const goal = parts[2]
        // a multi-day index is one per goal: its parts are the base and <seq>
        const at = kind === 'm' ? 0 : Number(parts[3])
        const delta = kind === 'm' ? parts[3] : parts[4]
        const size = join(goal, at, value)
        const layout = layoutOf(into, goal, at)
        if (delta === undefined) layout.base = size
        else {
          wroteDelta(layout, Number(delta), size)
          layouts.seq = Math.max(layouts.seq, Number(delta) + 1)
        }
      }
    }
    const merged = (map: U64Map, into: (map: U64Map) => void): number => (into(map), map.size)
    // a day's parts come together in key order: once the next day's come, the last one is whole
    let last: { goal: string; day: number } | undefined
    const done = () => {
      if (last !== undefined && settled(last.goal, last.day)) state.letGo(last.goal, last.day)
    }
    await loadParts('g', layouts.days, (goal, day, value) => {
      if (last?.goal !== goal || last.day !== day) {
        done()
        last = { goal, day }
      }
      return merged(decodeGoalDay(value), (map) => state.goal(goal).mergeDay(day, map))
    })
    done()
    const multiDay = new Map<string, MultiDayEntry[]>()
    await loadParts('m', layouts.multi, (goal, _, value) => {
      const entries = decodeMultiDay(value)
      const held = multiDay.get(goal)
      if (held) held.push(...entries)
      else multiDay.set(goal, entries)
      return entries.length
    })
    // an index's parts join: a session in two of them is one entry with the union of its days
    for (const [goal, entries] of multiDay) state.goal(goal).setMultiDay(entries)
    // counts by value of days whose set they match (the snapshot wrote them so); the rest are counted again
    for await (const [key, value] of this.#db.iterator(range(`w!${p}!`))) {
      const [, , goal, day] = key.split('!') as [string, string, string, string]
      if (state.goals.get(goal)?.holds(Number(day))) state.talliesOf(goal).restoreDay(Number(day), value.toString())
    }
    for await (const [key, value] of this.#db.iterator(range(`r!${p}!`))) {
      const [, , goal, day] = key.split('!') as [string, string, string, string]
      const revenue = state.revenueOf(goal)
      for (const [k, amount] of decodeRevenueDay(value)) revenue.record(k, Number(day), amount)
    }
    for await (const [key, value] of this.#db.iterator(range(`c!${p}!`))) {
      const [, , site, day] = key.split('!') as [string, string, string, string]
      state.site(site).days.set(Number(day), decodeSessionCounter(value))
      state.site(site).changedAt.set(Number(day), 0)
    }
    for await (const [key, value] of this.#db.iterator(range(`v!${p}!`))) {
      // the value key comes last and may itself hold `!`
      const [, , site, day] = key.split('!', 4) as [string, string, string, string]
      const at = `v!${p}!${site}!${day}!`.length
      const [group, combination] = parseValueKey(key.slice(at))
      const counters = state.valueCounters(site, Number(day))[group]
      if (counters?.depth !== combination.length) continue
      const c = decodeSessionCounter(value)
      counters.set(combination, c)
      state.valuesWritten.set(c, c.changes)
    }
    await loadParts('x', layouts.times, (goal, day, value) => {
      const times = decodeCompletionTimes(value)
      state.goal(goal).mergeTimes(day, times)
      return times.size
    })
    for await (const [key, value] of this.#db.iterator(range(`h!${p}!`))) {
      const [, , site, hour] = key.split('!') as [string, string, string, string]
      state.site(site).hours.set(Number(hour), decodeSessionCounter(value))
    }
    await loadParts('q', layouts.hours, (goal, hour, value) => merged(decodeGoalDay(value), (map) => state.goal(goal).mergeHour(hour, map)))
    for await (const [key, value] of this.#db.iterator(range(`t!${p}!`))) {
      const [, , site, kind] = key.split('!') as [string, string, string, string]
      const s = state.site(site)
      if (kind === 'p') s.paths = decodeTopK(value)
      else s.events = decodeTopK(value)
    }
    const meta: PartitionMeta = { replays: new Map(), zones: new Map() }
    for await (const [key, value] of this.#db.iterator(range(`z!${p}!`))) meta.zones.set(key.slice(`z!${p}!`.length), value.toString())
    for await (const [, value] of this.#db.iterator(range(`b!${p}!`))) {
      const r = JSON.parse(value.toString()) as ReplayRecord
      meta.replays.set(r.id, r)
    }
    // replays recorded before state was kept per partition: one record for every partition
    for await (const [key, value] of this.#db.iterator(range('b!'))) {
      if (/^b!\d/.test(key)) continue
      const r = JSON.parse(value.toString()) as { id: string; done: boolean }
      if (!meta.replays.has(r.id)) meta.replays.set(r.id, { id: r.id, until: state.offset, done: r.done })
    }
    return meta
  }

  /** The session hashes of every stored summary of a partition (keys only, no values read). */
  async *summaryHashes(partition: number): AsyncGenerator<{ hi: number; lo: number }> {
    const prefix = `s!${partition}!`
    for await (const key of this.#db.keys(range(prefix))) {
      const hex = key.slice(prefix.length)
      yield { hi: parseInt(hex.slice(0, 8), 16) | 0, lo: parseInt(hex.slice(8, 16), 16) | 0 }
    }
  }

  /**
   * One goal's stored set of a day and its further completion times: each its base and deltas
   * joined, as a restore joins them (an empty set, no times, when none are stored).
   */
  async readGoalDay(partition: number, goal: string, day: number): Promise<{ set: U64Map; times: CompletionTimes | undefined }> {
    // a base, then its deltas (`<base>!<seq>`): nothing else sorts between them
    const joined = async <T>(base: string, decode: (value: Buffer) => T, join: (into: T, part: T) => void): Promise<T | undefined> => {
      let out: T | undefined
      for await (const value of this.#db.values({ gte: base, lt: `${base}"` })) {
        const part = decode(value)
        if (out === undefined) out = part
        else join(out, part)
      }
      return out
    }
    const set = await joined(K.goalDay(partition, goal, day), decodeGoalDay, (into, part) => part.forEach((hi, lo, v) => void into.setMin(hi, lo, v)))
    const times = await joined(K.goalTimes(partition, goal, day), decodeCompletionTimes, (into, part) => into.merge(part))
    return { set: set ?? new U64Map(), times }
  }

  async getSummaries(partition: number, hks: string[]): Promise<(SessionSummary | undefined)[]> {
    if (hks.length === 0) return []
    const values = await this.#db.getMany(hks.map((hk) => K.summary(partition, hk)))
    return values.map((v) => (v === undefined ? undefined : decodeSummary(v)))
  }

  /**
   * Encodes the dirty parts of one partition into `sink`, yielding to the event loop every
   * SLICE_MS so that a large snapshot never stalls ingestion (a snapshot of 144k dirty
   * summaries in one synchronous pass blocked the loop for over a second). State that changes
   * between slices may be written a little ahead of the offset written with it: every update is a
   * join, so replaying from that offset re-applies nothing that could count twice.
   *
   * `sinkCopies`: the sink copies each value before it returns (LevelDB's chained batch does), so
   * summaries may be encoded into one reused buffer rather than a Buffer each.
   */
  async encodeSnapshot(
    state: PartitionImage, dirty: Dirty, replays: ReplayRecord[], zones: Map<string, string>, sink: (op: Op) => void, sinkCopies = false,
  ): Promise<void> {
    const p = state.partition
    let n = 0
    /** a turn to wait for when this one's time is spent; most puts return none, and await nothing */
    const put = (key: string, value: Buffer): Promise<void> | undefined => {
      sink({ type: 'put', key, value })
      return sliceDue(++n)
    }
    const offset = state.offset
    // the snapshot's summaries stay in their slots until it is over (PartitionState.written)
    const table = state.summaries
    const encode = sinkCopies ? encodeSummaryView : encodeSummary
    for (const slot of dirty.summaries) {
      const due = put(K.summaryOf(p, table.hiAt(slot), table.loAt(slot)), encode(table.summaryAt(slot)))
      if (due) await due
    }
    const layouts = this.#layoutsOf(p)
    // a snapshot that fails leaves its number unused: a later one never writes over its deltas
    const seq = layouts.seq++
    type Part = { value: Buffer; size: number }
    /**
     * One of a goal's sets that changed: as a delta of the sessions it changed (`changed` of them),
     * or whole when its layout says so or `changed` is null, its deltas then deleted. `whole` may
     * answer undefined to write nothing (the set went while it was encoded).
     */
    const putParts = async (
      layout: DayLayout, changed: number | null, keys: { whole: string; delta: (seq: number) => string },
      whole: () => Promise<Part | undefined> | Part, delta: () => Part,
    ): Promise<void> => {
      if (changed === null || !takesDelta(layout, changed)) {
        const part = await whole()
        if (!part) return
        await put(keys.whole, part.value)
        for (const d of layout.deltas) sink({ type: 'del', key: keys.delta(d) })
        wroteWhole(layout, part.size)
      } else {
        const part = delta()
        await put(keys.delta(seq), part.value)
        wroteDelta(layout, seq, part.size)
      }
    }
    /**
     * A goal's changed days (or hours): a large one is encoded whole across turns, and not written
     * back when the goal was deleted or the set dropped by retention meanwhile.
     */
    const putSets = async (changes: Map<string, Map<number, number[]>>, kind: GoalSets): Promise<void> => {
      for (const [goal, sets] of changes) {
        for (const [at, changed] of sets) {
          const map = kind.held(goal, at)
          if (!map) continue
          const keys = { whole: kind.whole(p, goal, at), delta: (d: number) => kind.delta(p, goal, at, d) }
          await putParts(layoutOf(kind.layouts, goal, at), changed.length / 2, keys, async () => {
            const whole = await encodeGoalDayInSlices(map)
            return kind.held(goal, at) === map ? whole : undefined
          }, () => {
            const delta = new U64Map(changed.length / 2)
            for (let i = 0; i < changed.length; i += 2) {
              const v = map.get(changed[i], changed[i + 1])
              if (v !== undefined) delta.setMin(changed[i], changed[i + 1], v)
            }
            return { value: asBuffer(encodeGoalDay(delta)), size: delta.size }
          })
        }
      }
    }
    await putSets(dirty.goalDays, {
      layouts: layouts.days, held: (goal, day) => state.goals.get(goal)?.dayMap(day), whole: K.goalDay, delta: K.goalDelta,
    })
    // completion times and multi-day indexes grow all day too: deltas of the sessions they changed
    const encodedTimes = (times: CompletionTimes): Part => ({ value: asBuffer(encodeCompletionTimes(times)), size: times.size })
    for (const [goal, days] of dirty.goalTimes) {
      const g = state.goals.get(goal)
      for (const [day, changed] of days) {
        const times = g?.timesOf(day)
        if (!times) continue
        const keys = { whole: K.goalTimes(p, goal, day), delta: (d: number) => K.goalTimesDelta(p, goal, day, d) }
        await putParts(layoutOf(layouts.times, goal, day), changed.length / 2, keys, () => encodedTimes(times), () => encodedTimes(times.pick(changed)))
      }
    }
    for (const [goal, changed] of dirty.multiDay) {
      const g = state.goals.get(goal)
      if (!g) continue
      const keys = { whole: K.multiDay(p, goal), delta: (d: number) => K.multiDayDelta(p, goal, d) }
      const sessions = changed ?? []
      // null: retention rebuilt the index, and only a whole write drops what it dropped
      await putParts(layoutOf(layouts.multi, goal, 0), changed === null ? null : sessions.length / 2, keys,
        () => ({ value: asBuffer(encodeMultiDay(g)), size: g.multiDayCount }),
        () => {
          const entries = g.multiDayEntriesOf(sessions)
          return { value: asBuffer(encodeMultiDay(entries)), size: entries.length }
        })
    }
    for (const [goal, days] of dirty.revenueDays) {
      const revenue = state.revenue.get(goal)
      if (!revenue) continue
      for (const day of days) {
        // a day is written whole: revenue events are few beside conversions
        const entries = revenue.dayEntries(day)
        if (entries.length) await put(K.revenueDay(p, goal, day), asBuffer(encodeRevenueDay(entries)))
        else sink({ type: 'del', key: K.revenueDay(p, goal, day) })
      }
    }
    for (const [site, days] of dirty.counters) {
      for (const day of days) {
        const c = state.sites.get(site)?.days.get(day)
        if (c) await put(K.counter(p, site, day), asBuffer(encodeSessionCounter(c)))
      }
    }
    for (const [site, days] of dirty.values) {
      const values = state.sites.get(site)?.values
      for (const day of days) {
        const counters = values?.get(day)
        if (!counters) continue
        for (let g = 0; g < counters.length; g++) {
          const changed: [(string | null)[], SessionCounter][] = []
          counters[g].forEach((combination, c) => {
            if (state.valuesWritten.get(c) !== c.changes) changed.push([combination, c])
          })
          for (const [combination, c] of changed) {
            state.valuesWritten.set(c, c.changes)
            const key = K.value(p, site, day, valueKey(g, combination))
            // a combination every session moved away from leaves no key behind
            if (c.count() > 0) await put(key, asBuffer(encodeSessionCounter(c)))
            else sink({ type: 'del', key })
          }
        }
      }
    }
    for (const [site, hours] of dirty.siteHours) {
      for (const hour of hours) {
        const c = state.sites.get(site)?.hours.get(hour)
        if (c) await put(K.siteHour(p, site, hour), asBuffer(encodeSessionCounter(c)))
      }
    }
    await putSets(dirty.goalHours, {
      layouts: layouts.hours, held: (goal, hour) => state.goals.get(goal)?.hourMaps().get(hour), whole: K.goalHour, delta: K.goalHourDelta,
    })
    for (const site of dirty.topK) {
      const s = state.sites.get(site)
      if (!s) continue
      await put(K.topK(p, site, 'p'), asBuffer(encodeTopK(s.paths)))
      await put(K.topK(p, site, 'e'), asBuffer(encodeTopK(s.events)))
    }
    for (const [site, tz] of zones) sink({ type: 'put', key: K.zone(p, site), value: Buffer.from(tz) })
    for (const r of replays) sink(this.replayOp(p, r))
    // synchronous from here to the end: a day's counts by value are written if neither they nor its
    // set changed since the keys were taken (the set as written is then the set they counted)
    for (const [goal, days] of dirty.tallies ?? []) {
      const t = state.tallies.get(goal)
      const g = state.goals.get(goal)
      for (const [day, check] of days) {
        // a goal deleted, a day dropped: their deletions remove the key
        if (t === undefined || !g?.holds(day)) continue
        const key = K.tally(p, goal, day)
        if (t === check.of && check.version !== undefined && t.versionOf(day) === check.version && g.dayStamp(day) === check.stamp) {
          sink({ type: 'put', key, value: Buffer.from(t.encodeDay(day)) })
        } else {
          sink({ type: 'del', key })
          // tried again by the next snapshot: a day that holds still through one is written
          if (t.versionOf(day) !== undefined) t.markDirty(day)
        }
      }
    }
    if (dirty.linkedAcross) sink({ type: 'put', key: K.linked(p), value: Buffer.from('1') })
    sink({ type: 'put', key: K.offset(p), value: Buffer.from(String(offset)) })
  }

  /**
   * A chained batch: operations go straight to LevelDB's native batch (which copies keys and values
   * at once), written atomically by `commit`.
   */
  openBatch(): { add(op: Op): void; commit(): Promise<void>; discard(): Promise<void> } {
    const batch = this.#db.batch()
    return {
      add: (op) => (op.type === 'put' ? batch.put(op.key, op.value) : batch.del(op.key)),
      commit: () => batch.write({ sync: true }),
      discard: () => batch.close(),
    }
  }

  async write(ops: Op[]): Promise<void> {
    // handed over a slice at a time, letting the event loop turn between slices: one array batch
    // of a Kafka node's snapshot (thousands of operations, validated and copied in one call) held
    // the loop for 60–80 ms. Nothing is visible before the commit, which is atomic either way
    const batch = this.openBatch()
    try {
      for (let i = 0; i < ops.length;) {
        batch.add(ops[i])
        const due = sliceDue(++i)
        if (due) await due
      }
      await batch.commit()
    } catch (err) {
      await batch.discard().catch(() => undefined)
      throw err
    }
  }

  replayOp(partition: number, r: ReplayRecord): Op {
    return { type: 'put', key: K.replay(partition, r.id), value: Buffer.from(JSON.stringify(r)) }
  }

  /**
   * Deletion ops for every stored key under the given prefixes (each ends in `!`) and for the given
   * exact keys, so that the same deletions can travel to a changelog.
   */
  async #deletions(prefixes: string[], keys: string[]): Promise<Op[]> {
    const ops: Op[] = keys.map((key): Op => ({ type: 'del', key }))
    for (const prefix of prefixes) {
      for await (const key of this.#db.keys(range(prefix))) ops.push({ type: 'del', key })
    }
    return ops
  }

  #layoutsOf(p: number): Layouts {
    let l = this.#layouts.get(p)
    if (!l) this.#layouts.set(p, (l = { days: new Map(), hours: new Map(), times: new Map(), multi: new Map(), seq: 1 }))
    return l
  }

  /** forgets the layouts of a goal's days and hours whose keys are being deleted (all, or one) */
  #forgetLayouts(p: number, goal: string, one?: { day: number } | { hour: number }): void {
    const layouts = this.#layouts.get(p)
    if (!layouts) return
    if (one === undefined) {
      for (const kind of [layouts.days, layouts.hours, layouts.times, layouts.multi]) kind.delete(goal)
    } else if ('day' in one) {
      layouts.days.get(goal)?.delete(one.day)
      layouts.times.get(goal)?.delete(one.day)
    } else layouts.hours.get(goal)?.delete(one.hour)
  }

  /** Ops removing a site's day buckets and its goals' state from one partition (before a re-bucketing replay). */
  clearSiteOps(site: string, goals: string[], p: number): Promise<Op[]> {
    for (const g of goals) this.#forgetLayouts(p, g)
    return this.#deletions(
      [`c!${p}!${site}!`, `v!${p}!${site}!`, `h!${p}!${site}!`, ...goals.flatMap((g) => goalPrefixes(p, g))],
      [...goals.map((g) => K.multiDay(p, g)), K.zone(p, site)],
    )
  }

  /** Ops removing a deleted goal's state from one partition. */
  deleteGoalOps(goal: string, p: number): Promise<Op[]> {
    this.#forgetLayouts(p, goal)
    return this.#deletions(goalPrefixes(p, goal), [K.multiDay(p, goal), K.replay(p, `goal:${goal}`), `b!goal:${goal}`])
  }

  /** Ops removing days past retention (and hours past the recent days): a site's counters and its goals' days, with their deltas. */
  deleteDaysOps(partition: number, site: string, dropped: DroppedKeys): Promise<Op[]> {
    const { counters, goalDays, siteHours, goalHours, revenueDays, valueDays } = dropped
    for (const [g, day] of goalDays) this.#forgetLayouts(partition, g, { day })
    for (const [g, hour] of goalHours) this.#forgetLayouts(partition, g, { hour })
    return this.#deletions(
      [
        ...goalDays.flatMap(([g, d]) => [`${K.goalDay(partition, g, d)}!`, `${K.goalTimes(partition, g, d)}!`]),
        ...goalHours.map(([g, h]) => `${K.goalHour(partition, g, h)}!`),
        ...valueDays.map((d) => K.valueDay(partition, site, d)),
      ],
      [
        ...counters.map((d) => K.counter(partition, site, d)), ...goalDays.map(([g, d]) => K.goalDay(partition, g, d)),
        ...goalDays.map(([g, d]) => K.goalTimes(partition, g, d)),
        ...siteHours.map((h) => K.siteHour(partition, site, h)), ...goalHours.map(([g, h]) => K.goalHour(partition, g, h)),
        ...revenueDays.map(([g, d]) => K.revenueDay(partition, g, d)),
        ...goalDays.map(([g, d]) => K.tally(partition, g, d)),
      ],
    )
  }

  /**
   * Deletes stored summaries of sessions whose last event is older than `cutoff` (retention): their
   * goal days are gone, so nothing can reach them. A summary changed since (in memory, dirty) is
   * written again by the next snapshot. Reads in chunks, yielding between them; returns the
   * deletions so a changelog can follow.
   */
  async pruneSummaries(partition: number, cutoff: number): Promise<Op[]> {
    const deleted: Op[] = []
    let from = `s!${partition}!`
    const end = `s!${partition}!\xff`
    for (;;) {
      const entries = await this.#db.iterator({ gt: from, lt: end, limit: 1000 }).all()
      if (entries.length === 0) return deleted
      const ops: Op[] = []
      for (const [key, value] of entries) {
        if (lastOfSummary(value) < cutoff) ops.push({ type: 'del', key })
      }
      if (ops.length) await this.#db.batch(ops)
      deleted.push(...ops)
      from = entries[entries.length - 1][0]
    }
  }

  /** Every key and value of a partition's state, for a changelog that starts empty. */
  async *partitionEntries(p: number): AsyncGenerator<[string, Buffer]> {
    for (const kind of STATE_KINDS) yield* this.#db.iterator(range(`${kind}!${p}!`))
    const offset = await this.#db.get(K.offset(p))
    if (offset !== undefined) yield [K.offset(p), offset]
  }

  /** Drops a partition's whole state (before it is restored from its changelog). */
  async clearPartition(p: number): Promise<void> {
    for (const kind of STATE_KINDS) await this.#db.clear(range(`${kind}!${p}!`))
    await this.#db.batch([{ type: 'del', key: K.offset(p) }, { type: 'del', key: K.changelogEnd(p) }], { sync: true })
  }

  async changelogEnd(p: number): Promise<number | undefined> {
    const v = await this.#db.get(K.changelogEnd(p))
    return v === undefined ? undefined : Number(v.toString())
  }

  changelogEndOp(p: number, end: number): Op {
    return { type: 'put', key: K.changelogEnd(p), value: Buffer.from(String(end)) }
  }

  /** Sets a record aside that failed to fold, with the error, so the partition can go on. */
  putDeadLetter(p: number, offset: number, value: Buffer, error: string): Promise<void> {
    return putDeadLetter(this.#db, p, offset, value, error)
  }

  deadLetters(p: number): Promise<DeadLetter[]> {
    return readDeadLetters(this.#db, p)
  }
}

/** One kind of a goal's sets in the store (days, or hours): where a set is held, and its keys. */
interface GoalSets {
  layouts: GoalLayouts
  held(goal: string, at: number): U64Map | undefined
  whole(p: number, goal: string, at: number): string
  delta(p: number, goal: string, at: number, seq: number): string
}

/** table slots a goal day's encoding packs between two looks at the turn's budget (~1 ms) */
const SLOTS_PER_STEP = 1 << 16

/**
 * A goal day's record, encoded across event-loop turns when the map is large: the fold goes on
 * meanwhile, and what it adds after the encoding began is in the next snapshot's changes.
 */
async function encodeGoalDayInSlices(map: U64Map): Promise<{ value: Buffer; size: number }> {
  if (map.slots <= SLOTS_PER_STEP) return { value: asBuffer(encodeGoalDay(map)), size: map.size }
  const encoder = new GoalDayEncoder(map)
  while (!encoder.step(SLOTS_PER_STEP)) {
    const due = turnDue()
    if (due) await due
  }
  return { value: asBuffer(encoder.done()), size: encoder.size }
}

/** the encoded bytes as a Buffer without copying them (each encoding is a fresh array) */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** the key ranges of a goal's state in a partition (its days, hours, times, revenue, counts by value, side index), for deletions */
function goalPrefixes(p: number, goal: string): string[] {
  return ['g', 'q', 'x', 'r', 'w', 'm'].map((kind) => `${kind}!${p}!${goal}!`)
}
