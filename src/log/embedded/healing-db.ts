/**
 * The embedded log's LevelDB handle, kept usable through failed writes.
 *
 * What LevelDB 1.20 (classic-level 3) does after a failed write, shown on a full tmpfs in
 * disk-full.test.ts:
 *  - the failed batch is not applied to the memtable: reads on the handle do not see it;
 *  - but the handle is no longer safe: a later write that it acknowledges is gone the next time
 *    the database opens (the log file was cut mid-record), and a batch whose fsync failed "may or
 *    may not show up when the DB is re-opened" (db_impl.cc).
 * So after any failed write the next write first reopens the database, which starts a fresh log
 * file, and the first batch that succeeds begins by putting every key a failed batch touched back
 * as it was before. A failed batch that reappears on reopen is undone before anyone reads it: the
 * partitions only read up to their last acknowledged offset, and config is read at start-up only.
 *
 * While writes fail, a probe write runs every `probeMs`, so the log heals by itself once the disk
 * has room, without waiting for traffic. Writes run one at a time (the group commit sends one
 * batch at a time anyway); reads run freely except while the handle is being replaced.
 */
import { randomBytes } from 'node:crypto'
import { open, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { BatchOp } from './commit-queue.js'
import { LogError, storageFailure } from '../errors.js'
import { encodeU64, PROBE_KEY } from './keys.js'
import { type LogDb, openDb, writeBatch } from './storage.js'
import { WriteHealth } from './write-health.js'

/** Writes one batch; tests wrap it to inject failures. */
export type BatchWriter = (db: LogDb, ops: readonly BatchOp[], sync: boolean) => Promise<void>

export interface HealingDbOptions {
  dir: string
  /** how often a probe write runs while writes fail (default 200 ms) */
  probeMs?: number
  /** replaces the plain batch write; tests use it to inject failures */
  writer?: BatchWriter
  /** called once for each failed write or reopen, with the error its caller gets */
  onFailure?(err: LogError): void
}

/**
 * Bytes written and fsynced beside the database before it is reopened: while the disk is still
 * full this fails in a millisecond and the open handle keeps serving reads, instead of closing it
 * and failing to open a new one (an open writes a manifest, a log and the recovered memtable).
 */
const ROOM_PROBE_BYTES = 1024 * 1024

export class HealingDb {
  readonly #dir: string
  readonly #writer: BatchWriter
  readonly #onFailure: (err: LogError) => void
  readonly #health: WriteHealth
  #db: LogDb | null
  #closed = false
  /** the handle saw a failed write: reopen before the next one */
  #broken = false
  /** by key (latin1): how to put back each key a failed batch touched */
  readonly #undo = new Map<string, BatchOp>()
  #writes: Promise<unknown> = Promise.resolve()
  #reads = 0
  #readsDone: (() => void) | null = null
  /** set while there is no usable handle; reads wait for it */
  #swapping: Promise<void> | null = null
  #swapped: (() => void) | null = null

  private constructor(db: LogDb, opts: HealingDbOptions) {
    this.#db = db
    this.#dir = opts.dir
    this.#writer = opts.writer ?? writeBatch
    this.#onFailure = opts.onFailure ?? (() => {})
    this.#health = new WriteHealth(opts.probeMs ?? 200, this.#onFailure, () =>
      this.write([{ type: 'put', key: PROBE_KEY, value: encodeU64(Date.now()) }]))
  }

  static async open(opts: HealingDbOptions): Promise<HealingDb> {
    return new HealingDb(await openDb(opts.dir), opts)
  }

  /** false from a failed write until a write (an append or the probe) succeeds */
  get healthy(): boolean {
    return this.#health.healthy && !this.#closed
  }

  /** Runs a read on the current handle; waits while the handle is being replaced. */
  async read<T>(fn: (db: LogDb) => Promise<T>): Promise<T> {
    while (this.#swapping) await this.#swapping
    const db = this.#db
    if (this.#closed || db === null) throw new LogError('LOG_CLOSED')
    this.#reads++
    try {
      return await fn(db)
    } finally {
      if (--this.#reads === 0) this.#readsDone?.()
    }
  }

  /**
   * Writes `ops` atomically (fsynced with `sync`), after any writes before it. Rejects with a
   * LogError: LOG_WRITE_FAILED when retrying can help (disk full, I/O error), LOG_STORAGE_FAILED
   * otherwise. Either way nothing of the batch is stored, and the next write tries again.
   */
  write(ops: readonly BatchOp[], sync = true): Promise<void> {
    const run = this.#writes.then(() => this.#attempt(ops, sync))
    this.#writes = run.catch(() => undefined)
    return run
  }

  /** Waits for writes, puts back what failed batches touched if it can, then closes. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#health.stop()
    await this.#writes
    if (this.#undo.size > 0) await this.write([]).catch(() => undefined)
    this.#closed = true
    this.#endSwap()
    if (this.#reads > 0) await new Promise<void>((resolve) => (this.#readsDone = resolve))
    await this.#db?.close()
    this.#db = null
  }

  async #attempt(ops: readonly BatchOp[], sync: boolean): Promise<void> {
    if (this.#closed) throw new LogError('LOG_CLOSED')
    if (this.#broken) await this.#reopen()
    const db = this.#db!
    const batch = this.#undo.size === 0 ? ops : [...this.#undo.values(), ...ops]
    if (batch.length === 0) return
    try {
      await this.#writer(db, batch, sync)
    } catch (cause) {
      this.#broken = true
      const err = this.#health.failed(storageFailure(cause))
      await this.#remember(db, ops).catch((readErr: unknown) =>
        this.#onFailure(storageFailure(readErr, 'could not read what the failed batch would have replaced')))
      throw err
    }
    this.#undo.clear()
    this.#health.succeeded()
  }

  /** Reads, on the handle that refused them, the values `ops` would have replaced. */
  async #remember(db: LogDb, ops: readonly BatchOp[]): Promise<void> {
    const fresh = ops.filter((op) => !this.#undo.has(op.key.toString('latin1')))
    if (fresh.length === 0) return
    // the first failure's values stand: a later read may already see a batch that reappeared
    const before = await db.getMany(fresh.map((op) => op.key))
    fresh.forEach((op, i) => {
      const value = before[i]
      this.#undo.set(op.key.toString('latin1'), value === undefined ? { type: 'del', key: op.key } : { type: 'put', key: op.key, value })
    })
  }

  async #reopen(): Promise<void> {
    try {
      await probeRoom(this.#dir)
    } catch (cause) {
      throw this.#health.failed(storageFailure(cause, 'the disk does not take writes yet'))
    }
    if (this.#db !== null) {
      this.#swapping ??= new Promise((resolve) => (this.#swapped = resolve))
      if (this.#reads > 0) await new Promise<void>((resolve) => (this.#readsDone = resolve))
      this.#readsDone = null
      const old = this.#db
      this.#db = null
      await old.close().catch(() => undefined)
    }
    try {
      this.#db = await openDb(this.#dir)
    } catch (cause) {
      // reads keep waiting: there is no handle to read from until an open succeeds
      throw this.#health.failed(storageFailure(cause, 'reopening the database failed'))
    }
    this.#broken = false
    this.#endSwap()
  }

  #endSwap(): void {
    this.#swapping = null
    this.#swapped?.()
    this.#swapped = null
  }
}

/** Writes, fsyncs and removes a scratch file in `dir`; rejects while the disk has no room. */
async function probeRoom(dir: string): Promise<void> {
  const file = join(dir, `room-probe-${randomBytes(4).toString('hex')}`)
  const handle = await open(file, 'w')
  try {
    await handle.write(Buffer.alloc(ROOM_PROBE_BYTES))
    await handle.sync()
  } finally {
    await handle.close().catch(() => undefined)
    await unlink(file).catch(() => undefined)
  }
}
