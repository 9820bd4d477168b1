/**
 * One run of bench/log-commit.mjs, in its own process (pinned by the parent): `concurrency`
 * callers append `perAppend` records of ~300 bytes of JSON each, awaiting every append, for
 * `seconds`, against either the embedded log or the durable minimum (one `write` + one
 * `fdatasync` per group of waiting appends, to a file in the same directory) or a variant of it.
 *
 * Env LOG_COMMIT_CASE: JSON { target: 'log' | 'durable' | 'dsync' | 'prealloc', concurrency, perAppend, seconds, dir,
 * partitions, warmupSeconds }. Sends { type: 'result', ... } over IPC, or { type: 'error' }.
 */
import { constants, readdirSync, readFileSync } from 'node:fs'
import { pbkdf2 } from 'node:crypto'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { EmbeddedLog } from '../dist/log/index.js'
import { summarize } from './lib/stats.mjs'

const TOPIC = 'events'
const NEWLINE = Buffer.from('\n')
const PATH = '/pricing/enterprise?utm_source=newsletter&utm_medium=email&utm_campaign=spring'

/** A pageview as the ingest path stores it: ~300 bytes of JSON, a fresh session per record. */
function event(n) {
  const json = `{"type":"pageview","site_id":"example.com","session_id":"${(n * 2654435761 >>> 0).toString(36)}-${n}",` +
    `"ts":${Date.now()},"url":"https://example.com${PATH}","referrer":"https://news.example.org/",` +
    `"device":"desktop","browser":"Firefox","os":"Linux","country":"DE","screen":"1920x1080"}`
  return Buffer.from(json)
}

/** Bytes of the pre-written file of the `prealloc` variant; writes wrap around at its end. */
const PREALLOC_BYTES = 256 * 1024 * 1024

/**
 * The durable minimum of bench/durable-min.mjs, as an in-process append(). Its commit starts a
 * microtask after the first append rather than at once: callers here resubmit in the turn their
 * last append settled, and over HTTP they could not, so starting at once would commit the first
 * caller alone every other time and handicap the baseline.
 *
 * Variants (what the log could do with files of its own, measured beside it):
 *   durable   append, then fdatasync: two thread-pool round trips, as durable-min.mjs
 *   dsync     append to a file opened O_DSYNC: one round trip, the sync inside the write
 *   prealloc  O_DSYNC writes into a file written with zeros and synced beforehand: the file's size
 *             and blocks never change, so a sync flushes data without a journal commit
 */
class DurableMinimum {
  commits = 0
  #file
  #position
  #waiting = []
  #committing = false

  #dsync

  constructor(file, position, dsync) {
    this.#file = file
    this.#position = position
    this.#dsync = dsync
  }

  static async open(dir, variant) {
    const path = join(dir, 'durable-min.bin')
    if (variant === 'durable') return new DurableMinimum(await open(path, 'a'), null, false)
    if (variant === 'dsync') return new DurableMinimum(await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC), null, true)
    const zeros = await open(path, 'w')
    const chunk = Buffer.alloc(8 * 1024 * 1024)
    for (let at = 0; at < PREALLOC_BYTES; at += chunk.length) await zeros.write(chunk, 0, chunk.length, at)
    await zeros.sync()
    await zeros.close()
    return new DurableMinimum(await open(path, constants.O_WRONLY | constants.O_DSYNC), 0, true)
  }

  append(records) {
    const body = records.length === 1 ? records[0].value : Buffer.concat(records.map((r) => r.value))
    return new Promise((resolve, reject) => {
      this.#waiting.push({ body, resolve, reject })
      if (this.#committing) return
      this.#committing = true
      queueMicrotask(() => void this.#commit())
    })
  }

  async #commit() {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting
      this.#waiting = []
      const buffers = []
      for (const w of batch) buffers.push(w.body, NEWLINE)
      try {
        const bytes = Buffer.concat(buffers)
        if (this.#position === null) {
          await this.#file.write(bytes)
        } else {
          if (this.#position + bytes.length > PREALLOC_BYTES) this.#position = 0
          await this.#file.write(bytes, 0, bytes.length, this.#position)
          this.#position += bytes.length
        }
        // O_DSYNC made the write synchronous already
        if (!this.#dsync) await this.#file.datasync()
        this.commits++
        for (const w of batch) w.resolve()
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    this.#committing = false
  }

  close() {
    return this.#file.close()
  }
}

/** Per thread of this process: name, CPU ticks, context switches (Linux only; empty elsewhere). */
function threads() {
  const out = new Map()
  let tids
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return out
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8')
      const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
      out.set(tid, {
        name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(),
        ticks: Number(fields[11]) + Number(fields[12]),
        switches: field('voluntary_ctxt_switches') + field('nonvoluntary_ctxt_switches'),
      })
    } catch {
      // the thread ended meanwhile
    }
  }
  return out
}

/**
 * Node 20 names every thread "node", so threads are told apart by what they do: the ones that
 * burn CPU while only pool work (pbkdf2) runs are libuv's pool, others alive at start-up are
 * V8's, and those that appear later are LevelDB's background (compaction) thread.
 */
const startupThreads = threads()
await Promise.all(Array.from({ length: 8 }, () => promisify(pbkdf2)('bench', 'salt', 20_000, 32, 'sha256')))
const poolThreads = new Set([...threads()].filter(([tid, t]) => t.ticks > (startupThreads.get(tid)?.ticks ?? Infinity)).map(([tid]) => tid))
poolThreads.delete(String(process.pid))

/** CPU seconds and context switches between two `threads()` readings, by kind of thread. */
function threadDelta(before, after) {
  const kinds = {
    main: { cpu: 0, switches: 0 },
    pool: { cpu: 0, switches: 0 },
    leveldb: { cpu: 0, switches: 0 },
    v8: { cpu: 0, switches: 0 },
  }
  const mainTid = String(process.pid)
  for (const [tid, now] of after) {
    const was = before.get(tid) ?? { ticks: 0, switches: 0 }
    const kind = tid === mainTid ? 'main' : poolThreads.has(tid) ? 'pool' : startupThreads.has(tid) ? 'v8' : 'leveldb'
    kinds[kind].cpu += (now.ticks - was.ticks) / 100
    kinds[kind].switches += now.switches - was.switches
  }
  return kinds
}

async function run(c) {
  const target = c.target === 'log'
    ? await EmbeddedLog.open({ dir: join(c.dir, 'log') })
    : await DurableMinimum.open(c.dir, c.target)
  if (c.target === 'log') await target.createTopic({ name: TOPIC, partitions: c.partitions })
  const append = c.target === 'log' ? (records) => target.append(TOPIC, records) : (records) => target.append(records)

  let n = 0
  // appends that settle in one turn of the loop came from one commit: a count that needs no hook
  let groups = 0
  let groupOpen = false
  const settled = () => {
    if (groupOpen) return
    groupOpen = true
    groups++
    setImmediate(() => (groupOpen = false))
  }
  const phase = async (seconds, latencies) => {
    const stopAt = performance.now() + seconds * 1000
    let appends = 0
    const caller = async () => {
      while (performance.now() < stopAt) {
        const records = []
        for (let i = 0; i < c.perAppend; i++) {
          const value = event(n++)
          records.push({ key: `example.com:${n}`, value, timestamp: Date.now() })
        }
        const start = performance.now()
        await append(records)
        settled()
        latencies?.push(performance.now() - start)
        appends++
      }
    }
    await Promise.all(Array.from({ length: c.concurrency }, caller))
    return appends
  }

  await phase(c.warmupSeconds)
  const latencies = []
  const groupsBefore = groups
  const commitsBefore = target.commits
  const threadsBefore = threads()
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const appends = await phase(c.seconds, latencies)
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const byThread = threadDelta(threadsBefore, threads())
  await target.close()
  const commits = target.commits === undefined ? groups - groupsBefore : target.commits - commitsBefore
  return {
    ...c,
    appends,
    records: appends * c.perAppend,
    elapsed,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    commits,
    commitsCounted: target.commits === undefined ? 'settle groups' : 'exact',
    settleGroups: groups - groupsBefore,
    latency: summarize(latencies),
    threads: byThread,
  }
}

try {
  const result = await run(JSON.parse(process.env.LOG_COMMIT_CASE))
  process.send({ type: 'result', result })
} catch (err) {
  process.send({ type: 'error', error: err?.stack ?? String(err) })
}
process.disconnect()
