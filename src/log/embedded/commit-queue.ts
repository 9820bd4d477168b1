/**
 * Group commit: many appends share one durable write.
 *
 * Jobs wait in a queue; at most one batch is being written at a time. When it completes, every
 * job in it settles and whatever queued meanwhile becomes the next batch, so N concurrent
 * appends cost one fsync instead of N. A job learns its place (offsets, sequence numbers) only
 * when its batch is formed, and hands it back if the write fails, so a failed batch leaves no
 * gap and nothing visible.
 */
import { LogError } from '../errors.js'

export type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer }

export interface CommitJob<B> {
  /** records it carries, counted by `pending` */
  readonly size: number
  /** adds its writes to the batch being formed, taking offsets or sequence numbers */
  stage(batch: B): void
  /** the batch is durable: publish it (runs before the job's promise resolves) */
  commit(): void
  /** the batch failed: give back what `stage` took (called in reverse staging order) */
  abort(): void
}

/** Writes one batch durably and resolves when it is on disk. */
export type DurableWrite<B> = (batch: B) => Promise<void>

interface Waiting<B> {
  job: CommitJob<B>
  resolve(): void
  reject(err: unknown): void
}

/**
 * @example
 * const queue = new CommitQueue<BatchOp[]>(() => [], (ops) => db.write(ops), 10_000)
 * await queue.submit(job)
 */
export class CommitQueue<B> {
  readonly #newBatch: () => B
  readonly #write: DurableWrite<B>
  readonly #maxRecords: number
  #waiting: Array<Waiting<B>> = []
  #writing = false
  #scheduled = false
  #pending = 0
  #idle: Array<() => void> = []

  constructor(newBatch: () => B, write: DurableWrite<B>, maxRecords: number) {
    this.#newBatch = newBatch
    this.#write = write
    this.#maxRecords = maxRecords
  }

  /** records queued or being written */
  get pending(): number {
    return this.#pending
  }

  submit(job: CommitJob<B>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ job, resolve, reject })
      this.#pending += job.size
      this.#schedule()
    })
  }

  /** resolves once nothing is queued or being written */
  drain(): Promise<void> {
    if (this.#pending === 0 && !this.#writing && this.#waiting.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  // Flushing on a microtask rather than inside submit() lets appends issued in the same tick
  // share the first batch too, at no measurable cost in latency.
  #schedule(): void {
    if (this.#scheduled || this.#writing) return
    this.#scheduled = true
    queueMicrotask(() => {
      this.#scheduled = false
      this.#flush()
    })
  }

  #take(): Array<Waiting<B>> {
    let records = 0
    let count = 0
    while (count < this.#waiting.length && (count === 0 || records < this.#maxRecords)) {
      const next = this.#waiting[count].job.size
      if (count > 0 && records + next > this.#maxRecords) break
      records += next
      count++
    }
    return this.#waiting.splice(0, count)
  }

  #flush(): void {
    if (this.#writing) return
    if (this.#waiting.length === 0) {
      for (const resolve of this.#idle.splice(0)) resolve()
      return
    }
    const batch = this.#take()
    const staging = this.#newBatch()
    const staged: Array<Waiting<B>> = []
    try {
      for (const entry of batch) {
        staged.push(entry) // first, so that a job that throws half-staged is aborted too
        entry.job.stage(staging)
      }
    } catch (err) {
      // stage() throws only on a bug; fail the whole batch rather than write part of it
      for (let i = staged.length - 1; i >= 0; i--) staged[i].job.abort()
      this.#settle(batch, err)
      return
    }
    this.#writing = true
    new Promise<void>((resolve) => resolve(this.#write(staging))).then(
      () => this.#settle(batch, null),
      (cause: unknown) => {
        for (let i = batch.length - 1; i >= 0; i--) batch[i].job.abort()
        this.#settle(batch, cause instanceof LogError ? cause : new LogError('LOG_WRITE_FAILED', undefined, { cause }))
      },
    )
  }

  #settle(batch: Array<Waiting<B>>, failure: unknown): void {
    if (failure === null) {
      for (const entry of batch) {
        try {
          entry.job.commit()
          entry.resolve()
        } catch (err) {
          entry.reject(err)
        }
      }
    } else {
      for (const entry of batch) entry.reject(failure)
    }
    for (const entry of batch) this.#pending -= entry.job.size
    this.#writing = false
    this.#flush()
  }
}
