import { Level } from 'level'
import { U64Map } from '../sketch/index.js'
import { hashHex, hashKeyHex } from '../sketch/index.js'
import type { SessionSummary } from '../schema/index.js'
import type { Dirty, PartitionImage } from './partition-image.js'
import { decodeSummary, encodeSummary, encodeSummaryView, lastOfSummary } from './summary-v1.js'
import {
  decodeGoalDay, decodeMultiDay, decodeSessionCounter, decodeTopK,
  encodeGoalDay, encodeMultiDay, encodeSessionCounter, encodeTopK,
} from './snapshot-v1.js'

/*
 * Key layout of the state store (one LevelDB, string keys, Buffer values). <p> is the partition
 * in decimal, <day> the local day number zero-padded to 6 digits so that days sort numerically.
 *
 *   o!<p>                    next offset to fold (decimal text)       written in every snapshot
 *   s!<p>!<hash16>           session summary                          summary-v1 (JSON before it)
 *   g!<p>!<goal>!<day>       one goal's converted sessions of a day    snapshot-v1 goal day
 *   g!<p>!<goal>!<day>!<seq> the sessions of that day changed by one snapshot (a delta; see DayLayout)
 *   m!<p>!<goal>             a goal's multi-day side index             snapshot-v1 multi-day
 *   c!<p>!<site>!<day>       distinct sessions of a site and day       snapshot-v1 session counter
 *   t!<p>!<site>!p|e         suggestion counters: paths | event names  snapshot-v1 top-k
 *   z!<p>!<site>             the time zone the site's days are bucketed in (text)
 *   b!<p>!goal:<id> | b!<p>!site:<id>  a replay of the partition's log for a new goal or a site's new time zone (JSON)
 *   l!<p>                    the changelog's end offset after this store last wrote to it (Kafka mode)
 *   d!<p>!<offset>           a record set aside because it failed to fold (JSON: error, value)
 *
 * Every key but l! and d! starts with <kind>!<p>!, so a partition's state is one key range per
 * kind, and a snapshot writes one partition's dirty keys and its offset in ONE atomic batch: a
 * restored state always matches the offset it resumes from (Kafka Streams' state store + its
 * checkpoint, collapsed into one write). The same operations go to the changelog topic first.
 */

const pad = (day: number) => String(day).padStart(6, '0')
const K = {
  offset: (p: number) => `o!${p}`,
  summary: (p: number, hk: string) => `s!${p}!${hashKeyHex(hk)}`,
  summaryOf: (p: number, hi: number, lo: number) => `s!${p}!${hashHex(hi, lo)}`,
  goalDay: (p: number, goal: string, day: number) => `g!${p}!${goal}!${pad(day)}`,
  goalDelta: (p: number, goal: string, day: number, seq: number) => `g!${p}!${goal}!${pad(day)}!${String(seq).padStart(10, '0')}`,
  multiDay: (p: number, goal: string) => `m!${p}!${goal}`,
  counter: (p: number, site: string, day: number) => `c!${p}!${site}!${pad(day)}`,
  topK: (p: number, site: string, kind: 'p' | 'e') => `t!${p}!${site}!${kind}`,
  zone: (p: number, site: string) => `z!${p}!${site}`,
  replay: (p: number, id: string) => `b!${p}!${id}`,
  changelogEnd: (p: number) => `l!${p}`,
  deadLetter: (p: number, offset: number) => `d!${p}!${String(offset).padStart(16, '0')}`,
}
/** key kinds that belong to a partition's state (and travel through its changelog) */
const STATE_KINDS = ['o', 's', 'g', 'm', 'c', 't', 'z', 'b'] as const
/**
 * How long a snapshot encodes before it lets the event loop turn. By time, not by count: on a
 * shared core 1000 operations took 30–80 ms of wall time while the store's own threads ran.
 */
const SLICE_MS = 4
/** operations between two looks at the clock */
const CLOCK_EVERY = 32

/**
 * One turn of the event loop shared by every snapshot encoding under way. Partitions snapshot
 * together: each with a clock of its own ran its own 4 ms in the same turn (four partitions, 16 ms
 * and more). Now the first to resume spends the turn's budget and the others yield at their next look.
 */
let turn: Promise<void> | null = null
let turnStart = 0
function nextTurn(): Promise<void> {
  turn ??= new Promise<void>((resolve) => setImmediate(() => {
    turn = null
    turnStart = performance.now()
    resolve()
  }))
  return turn
}
const range = (prefix: string) => ({ gt: prefix, lt: `${prefix}\xff` })

/**
 * How a goal's day lies in the store: a base (the whole day when it was last written whole) and
 * deltas, one per snapshot that changed the day, holding only the sessions it changed. A day is
 * the join of its parts. Writing the whole day on every change cost O(conversions of the day)
 * per snapshot: 70 ms of encoding per goal at 150 k conversions, growing all day. A delta costs
 * O(what changed); the day is written whole again once its deltas hold as many entries as the
 * base (so whole writes stay amortized O(1) per entry) or reach MAX_DELTAS (so a restore reads few).
 */
interface DayLayout {
  base: number
  deltas: number[]
  deltaEntries: number
}
/** a partition's day layouts by goal and day, and the number its next delta takes */
interface Layouts {
  goals: Map<string, Map<number, DayLayout>>
  seq: number
}
const MAX_DELTAS = 32
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

  /** Restores everything but the summaries (read on demand) into an empty partition state. */
  async loadPartition(state: PartitionImage): Promise<PartitionMeta> {
    const p = state.partition
    const offset = await this.#db.get(K.offset(p))
    state.offset = offset === undefined ? 0 : Number(offset.toString())
    this.#layouts.delete(p)
    const layouts = this.#layoutsOf(p)
    for await (const [key, value] of this.#db.iterator(range(`g!${p}!`))) {
      const [, , goal, day, delta] = key.split('!') as [string, string, string, string, string | undefined]
      const map = decodeGoalDay(value)
      state.goal(goal).mergeDay(Number(day), map)
      const layout = layoutOf(layouts, goal, Number(day))
      if (delta === undefined) layout.base = map.size
      else {
        layout.deltas.push(Number(delta))
        layout.deltaEntries += map.size
        layouts.seq = Math.max(layouts.seq, Number(delta) + 1)
      }
    }
    for await (const [key, value] of this.#db.iterator(range(`m!${p}!`))) {
      state.goal(key.split('!')[2]).setMultiDay(decodeMultiDay(value))
    }
    for await (const [key, value] of this.#db.iterator(range(`c!${p}!`))) {
      const [, , site, day] = key.split('!') as [string, string, string, string]
      state.site(site).days.set(Number(day), decodeSessionCounter(value))
      state.site(site).changedAt.set(Number(day), 0)
    }
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
    const put = async (key: string, value: Buffer): Promise<void> => {
      sink({ type: 'put', key, value })
      if (++n % CLOCK_EVERY === 0 && performance.now() - turnStart >= SLICE_MS) await nextTurn()
    }
    const offset = state.offset
    // the snapshot's summaries stay in their slots until it is over (PartitionState.written)
    const table = state.summaries
    const encode = sinkCopies ? encodeSummaryView : encodeSummary
    for (const slot of dirty.summaries) await put(K.summaryOf(p, table.hiAt(slot), table.loAt(slot)), encode(table.summaryAt(slot)))
    const layouts = this.#layoutsOf(p)
    // a snapshot that fails leaves its number unused: a later one never writes over its deltas
    const seq = layouts.seq++
    for (const [goal, days] of dirty.goalDays) {
      for (const [day, changed] of days) {
        const map = state.goals.get(goal)?.dayMap(day)
        if (!map) continue
        const layout = layoutOf(layouts, goal, day)
        if (layout.deltas.length >= MAX_DELTAS || layout.deltaEntries + changed.length / 2 > layout.base) {
          await put(K.goalDay(p, goal, day), Buffer.from(encodeGoalDay(map)))
          for (const d of layout.deltas) sink({ type: 'del', key: K.goalDelta(p, goal, day, d) })
          layout.base = map.size
          layout.deltas = []
          layout.deltaEntries = 0
        } else {
          const delta = new U64Map(changed.length / 2)
          for (let i = 0; i < changed.length; i += 2) {
            const v = map.get(changed[i], changed[i + 1])
            if (v !== undefined) delta.setMin(changed[i], changed[i + 1], v)
          }
          await put(K.goalDelta(p, goal, day, seq), Buffer.from(encodeGoalDay(delta)))
          layout.deltas.push(seq)
          layout.deltaEntries += delta.size
        }
      }
    }
    for (const goal of dirty.multiDay) {
      const g = state.goals.get(goal)
      if (g) await put(K.multiDay(p, goal), Buffer.from(encodeMultiDay(g)))
    }
    for (const [site, days] of dirty.counters) {
      for (const day of days) {
        const c = state.sites.get(site)?.days.get(day)
        if (c) await put(K.counter(p, site, day), Buffer.from(encodeSessionCounter(c)))
      }
    }
    for (const site of dirty.topK) {
      const s = state.sites.get(site)
      if (!s) continue
      await put(K.topK(p, site, 'p'), Buffer.from(encodeTopK(s.paths)))
      await put(K.topK(p, site, 'e'), Buffer.from(encodeTopK(s.events)))
    }
    for (const [site, tz] of zones) sink({ type: 'put', key: K.zone(p, site), value: Buffer.from(tz) })
    for (const r of replays) sink(this.replayOp(p, r))
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

  write(ops: Op[]): Promise<void> {
    return this.#db.batch(ops, { sync: true })
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
    if (!l) this.#layouts.set(p, (l = { goals: new Map(), seq: 1 }))
    return l
  }

  /** forgets the layouts of a goal's days (all, or those before `beforeDay`) whose keys are being deleted */
  #forgetLayouts(p: number, goal: string, beforeDay = Infinity): void {
    const days = this.#layouts.get(p)?.goals.get(goal)
    if (!days) return
    for (const day of days.keys()) if (day < beforeDay) days.delete(day)
  }

  /** Ops removing a site's day buckets and its goals' state from one partition (before a re-bucketing replay). */
  clearSiteOps(site: string, goals: string[], p: number): Promise<Op[]> {
    for (const g of goals) this.#forgetLayouts(p, g)
    return this.#deletions([`c!${p}!${site}!`, ...goals.map((g) => `g!${p}!${g}!`)], [...goals.map((g) => K.multiDay(p, g)), K.zone(p, site)])
  }

  /** Ops removing a deleted goal's state from one partition. */
  deleteGoalOps(goal: string, p: number): Promise<Op[]> {
    this.#forgetLayouts(p, goal)
    return this.#deletions([`g!${p}!${goal}!`], [K.multiDay(p, goal), K.replay(p, `goal:${goal}`), `b!goal:${goal}`])
  }

  /** Ops removing days past retention: a site's counters and its goals' days, with their deltas. */
  deleteDaysOps(partition: number, site: string, counters: number[], goalDays: [string, number][]): Promise<Op[]> {
    for (const [g, d] of goalDays) this.#forgetLayouts(partition, g, d + 1)
    return this.#deletions(
      goalDays.map(([g, d]) => `${K.goalDay(partition, g, d)}!`),
      [...counters.map((d) => K.counter(partition, site, d)), ...goalDays.map(([g, d]) => K.goalDay(partition, g, d))],
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
    const entry = JSON.stringify({ partition: p, offset, error, value: value.toString('utf8'), at: new Date().toISOString() })
    return this.#db.put(K.deadLetter(p, offset), Buffer.from(entry), { sync: true })
  }

  async deadLetters(p: number): Promise<{ offset: number; error: string; value: string }[]> {
    const out: { offset: number; error: string; value: string }[] = []
    for await (const [, v] of this.#db.iterator(range(`d!${p}!`))) out.push(JSON.parse(v.toString()) as { offset: number; error: string; value: string })
    return out
  }
}

function layoutOf(layouts: Layouts, goal: string, day: number): DayLayout {
  let days = layouts.goals.get(goal)
  if (!days) layouts.goals.set(goal, (days = new Map<number, DayLayout>()))
  let layout = days.get(day)
  if (!layout) days.set(day, (layout = { base: 0, deltas: [], deltaEntries: 0 }))
  return layout
}
