import { Level } from 'level'
import { hashKeyHex, type PartitionState, type Dirty } from '../stream/partition-state.js'
import { decodeSummary, encodeSummary, type SessionSummary } from '../stream/session-summary.js'
import {
  decodeGoalDay, decodeMultiDay, decodeSessionCounter, decodeTopK,
  encodeGoalDay, encodeMultiDay, encodeSessionCounter, encodeTopK,
} from './snapshot-v1.js'

/*
 * Key layout of the state store (one LevelDB, string keys, Buffer values). <p> is the partition
 * in decimal, <day> the local day number zero-padded to 6 digits so that days sort numerically.
 *
 *   o!<p>                    next offset to fold (decimal text)       written in every snapshot
 *   s!<p>!<hash16>           session summary (JSON)                   session-summary.ts
 *   g!<p>!<goal>!<day>       one goal's converted sessions of a day    snapshot-v1 goal day
 *   m!<p>!<goal>             a goal's multi-day side index             snapshot-v1 multi-day
 *   c!<p>!<site>!<day>       distinct sessions of a site and day       snapshot-v1 session counter
 *   t!<p>!<site>!p|e         suggestion counters: paths | event names  snapshot-v1 top-k
 *   b!goal:<id> | b!site:<id> a replay of the log for a new goal or a site's new time zone (JSON)
 *
 * A snapshot writes the dirty keys of every partition and their offsets in ONE atomic batch, so a
 * restored state always matches the offset it resumes from (Kafka Streams' state store + changelog
 * checkpoint, collapsed into one write).
 */

const pad = (day: number) => String(day).padStart(6, '0')
const K = {
  offset: (p: number) => `o!${p}`,
  summary: (p: number, hk: string) => `s!${p}!${hashKeyHex(hk)}`,
  goalDay: (p: number, goal: string, day: number) => `g!${p}!${goal}!${pad(day)}`,
  multiDay: (p: number, goal: string) => `m!${p}!${goal}`,
  counter: (p: number, site: string, day: number) => `c!${p}!${site}!${pad(day)}`,
  topK: (p: number, site: string, kind: 'p' | 'e') => `t!${p}!${site}!${kind}`,
  replay: (id: string) => `b!${id}`,
}

type Op = { type: 'put'; key: string; value: Buffer } | { type: 'del'; key: string }

/**
 * A replay of the retained log that rebuilds part of the state: `goal:<id>` counts a new goal
 * (goals are retroactive), `site:<id>` re-buckets a site whose time zone changed. Below `until`
 * (per partition) the replay counts; from it on the live fold does. `done` is written in the same
 * batch as the state it produced, so a crash before that reruns the replay.
 */
export interface ReplayRecord {
  id: string
  until: number[]
  done: boolean
}

export class StateStore {
  readonly #db: Level<string, Buffer>

  private constructor(db: Level<string, Buffer>) {
    this.#db = db
  }

  static async open(dir: string): Promise<StateStore> {
    const db = new Level<string, Buffer>(dir, { valueEncoding: 'buffer' })
    await db.open()
    return new StateStore(db)
  }

  close(): Promise<void> {
    return this.#db.close()
  }

  /** Restores everything but the summaries (read on demand) into an empty partition state. */
  async loadPartition(state: PartitionState): Promise<void> {
    const p = state.partition
    const offset = await this.#db.get(K.offset(p))
    state.offset = offset === undefined ? 0 : Number(offset.toString())
    for await (const [key, value] of this.#db.iterator({ gt: `g!${p}!`, lt: `g!${p}!\xff` })) {
      const [, , goal, day] = key.split('!') as [string, string, string, string]
      state.goal(goal).setDay(Number(day), decodeGoalDay(value))
    }
    for await (const [key, value] of this.#db.iterator({ gt: `m!${p}!`, lt: `m!${p}!\xff` })) {
      state.goal(key.split('!')[2]!).setMultiDay(decodeMultiDay(value))
    }
    for await (const [key, value] of this.#db.iterator({ gt: `c!${p}!`, lt: `c!${p}!\xff` })) {
      const [, , site, day] = key.split('!') as [string, string, string, string]
      state.site(site).days.set(Number(day), decodeSessionCounter(value))
      state.site(site).changedAt.set(Number(day), 0)
    }
    for await (const [key, value] of this.#db.iterator({ gt: `t!${p}!`, lt: `t!${p}!\xff` })) {
      const [, , site, kind] = key.split('!') as [string, string, string, string]
      const s = state.site(site)
      if (kind === 'p') s.paths = decodeTopK(value)
      else s.events = decodeTopK(value)
    }
  }

  async getSummaries(partition: number, hks: string[]): Promise<(SessionSummary | undefined)[]> {
    if (hks.length === 0) return []
    const values = await this.#db.getMany(hks.map((hk) => K.summary(partition, hk)))
    return values.map((v) => (v === undefined ? undefined : decodeSummary(v.toString())))
  }

  /**
   * Encodes the dirty parts of each partition (synchronously, so they reflect exactly the offsets
   * taken with them) and returns the write, which runs as one atomic batch.
   */
  snapshotOps(parts: { state: PartitionState; dirty: Dirty }[], replays: ReplayRecord[]): Op[] {
    const ops: Op[] = []
    for (const { state, dirty } of parts) {
      const p = state.partition
      for (const hk of dirty.summaries) {
        const s = state.summaries.get(hk)
        if (s) ops.push({ type: 'put', key: K.summary(p, hk), value: Buffer.from(encodeSummary(s)) })
      }
      for (const [goal, days] of dirty.goalDays) {
        const g = state.goals.get(goal)
        if (!g) continue
        for (const day of days) {
          const map = g.dayMap(day)
          if (map) ops.push({ type: 'put', key: K.goalDay(p, goal, day), value: Buffer.from(encodeGoalDay(map)) })
        }
      }
      for (const goal of dirty.multiDay) {
        const g = state.goals.get(goal)
        if (g) ops.push({ type: 'put', key: K.multiDay(p, goal), value: Buffer.from(encodeMultiDay(g)) })
      }
      for (const [site, days] of dirty.counters) {
        const s = state.sites.get(site)
        for (const day of days) {
          const c = s?.days.get(day)
          if (c) ops.push({ type: 'put', key: K.counter(p, site, day), value: Buffer.from(encodeSessionCounter(c)) })
        }
      }
      for (const site of dirty.topK) {
        const s = state.sites.get(site)
        if (!s) continue
        ops.push({ type: 'put', key: K.topK(p, site, 'p'), value: Buffer.from(encodeTopK(s.paths)) })
        ops.push({ type: 'put', key: K.topK(p, site, 'e'), value: Buffer.from(encodeTopK(s.events)) })
      }
      ops.push({ type: 'put', key: K.offset(p), value: Buffer.from(String(state.offset)) })
    }
    for (const r of replays) ops.push({ type: 'put', key: K.replay(r.id), value: Buffer.from(JSON.stringify(r)) })
    return ops
  }

  write(ops: Op[]): Promise<void> {
    return this.#db.batch(ops, { sync: true })
  }

  async replays(): Promise<ReplayRecord[]> {
    const out: ReplayRecord[] = []
    for await (const [, v] of this.#db.iterator({ gt: 'b!', lt: 'b!\xff' })) out.push(JSON.parse(v.toString()))
    return out
  }

  putReplay(r: ReplayRecord): Promise<void> {
    return this.#db.put(K.replay(r.id), Buffer.from(JSON.stringify(r)), { sync: true })
  }

  /** Removes a site's day buckets and its goals' state from every partition (before a re-bucketing replay). */
  async clearSite(site: string, goals: string[], partitions: number): Promise<void> {
    for (let p = 0; p < partitions; p++) {
      await this.#db.clear({ gt: `c!${p}!${site}!`, lt: `c!${p}!${site}!\xff` })
      for (const goal of goals) {
        await this.#db.clear({ gt: `g!${p}!${goal}!`, lt: `g!${p}!${goal}!\xff` })
        await this.#db.del(K.multiDay(p, goal))
      }
    }
  }

  /**
   * Deletes stored summaries of sessions whose last event is older than `cutoff` (retention): their
   * goal days are gone, so nothing can reach them. A summary changed since (in memory, dirty) is
   * written again by the next snapshot. Reads in chunks, yielding between them.
   */
  async pruneSummaries(partition: number, cutoff: number): Promise<number> {
    let deleted = 0
    let from = `s!${partition}!`
    const end = `s!${partition}!\xff`
    for (;;) {
      const entries = await this.#db.iterator({ gt: from, lt: end, limit: 1000 }).all()
      if (entries.length === 0) return deleted
      const ops: Op[] = []
      for (const [key, value] of entries) {
        const summary = decodeSummary(value.toString())
        if (summary.last < cutoff) ops.push({ type: 'del', key })
      }
      if (ops.length) await this.#db.batch(ops)
      deleted += ops.length
      from = entries[entries.length - 1]![0]
    }
  }

  /** Removes a deleted goal's state from every partition. */
  async deleteGoal(goal: string, partitions: number): Promise<void> {
    for (let p = 0; p < partitions; p++) {
      await this.#db.clear({ gt: `g!${p}!${goal}!`, lt: `g!${p}!${goal}!\xff` })
      await this.#db.del(K.multiDay(p, goal))
    }
    await this.#db.del(K.replay(`goal:${goal}`))
  }

  deleteDays(partition: number, site: string, counters: number[], goalDays: [string, number][]): Promise<void> {
    const ops: Op[] = [
      ...counters.map((d): Op => ({ type: 'del', key: K.counter(partition, site, d) })),
      ...goalDays.map(([g, d]): Op => ({ type: 'del', key: K.goalDay(partition, g, d) })),
    ]
    return ops.length ? this.#db.batch(ops) : Promise.resolve()
  }
}
