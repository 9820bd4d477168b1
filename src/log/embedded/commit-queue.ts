/**
 * Group commit: many appends share one synchronous LevelDB write.
 *
 * Jobs wait in a queue; at most one batch is being written at a time. When it completes, every
 * job in it settles and whatever queued meanwhile becomes the next batch, so N concurrent
 * appends cost one fsync instead of N. A job learns its place (offsets, sequence numbers) only
 * when its batch is formed, and hands it back if the write fails, so a failed batch leaves no
 * gap and nothing visible.
 */
import { LogError } from '../errors.js'

export type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer }

/** A write that many jobs of one batch contribute to, such as a partition's segment. */
export interface Gathering {
  /** all jobs are staged: add the write */
  seal(ops: BatchOp[]): void
}

/** The batch being formed: the jobs' own writes, and the writes they gather into. */
export class Batch {
  readonly ops: BatchOp[] = []
  readonly #gatherings = new Map<object, Gathering>()

  /** The gathering `owner` has in this batch, made by `create` when it has none yet. */
  gather<T extends Gathering>(owner: object, create: () => T): T {
    let gathering = this.#gatherings.get(owner)
    if (gathering === undefined) {
      gathering = create()
      this.#gatherings.set(owner, gathering)
    }
    return gathering as T
  }

  /** Every write of the batch: the jobs' own, then each gathering's. */
  seal(): BatchOp[] {
    for (const gathering of this.#gatherings.values()) gathering.seal(this.ops)
    return this.ops
  }
}

export interface CommitJob {
  /** records it carries, counted by `pending` */
  readonly size: number
  /** adds its writes to the batch being formed, taking offsets or sequence numbers */
  stage(batch: Batch): void
  /** the batch is durable: publish it (runs before the job's promise resolves) */
  commit(): void
  /** the batch failed: give back what `stage` took (called in reverse staging order) */
  abort(): void
}

/** Writes one batch durably (fsync) and resolves when it is on disk. */
export type DurableWrite = (ops: BatchOp[]) => Promise<void>

interface Waiting {
  job: CommitJob
  resolve(): void
  reject(err: unknown): void
}

export class CommitQueue {
  readonly #write: DurableWrite
  readonly #maxRecords: number
  #waiting: Waiting[] = []
  #writing = false
  #scheduled = false
  #pending = 0
  #idle: Array<() => void> = []

  constructor(write: DurableWrite, maxRecords: number) {
    this.#write = write
    this.#maxRecords = maxRecords
  }

  /** records queued or being written */
  get pending(): number {
    return this.#pending
  }

  submit(job: CommitJob): Promise<void> {
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

  #take(): Waiting[] {
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
    const staging = new Batch()
    const staged: Waiting[] = []
    let ops: BatchOp[]
    try {
      for (const entry of batch) {
        staged.push(entry) // first, so that a job that throws half-staged is aborted too
        entry.job.stage(staging)
      }
      ops = staging.seal()
    } catch (err) {
      // stage() and seal() throw only on a bug; fail the whole batch rather than write part of it
      for (let i = staged.length - 1; i >= 0; i--) staged[i].job.abort()
      this.#settle(batch, err)
      return
    }
    this.#writing = true
    this.#write(ops).then(
      () => this.#settle(batch, null),
      (cause: unknown) => {
        for (let i = batch.length - 1; i >= 0; i--) batch[i].job.abort()
        this.#settle(batch, cause instanceof LogError ? cause : new LogError('LOG_WRITE_FAILED', undefined, { cause }))
      },
    )
  }

  #settle(batch: Waiting[], failure: unknown): void {
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
