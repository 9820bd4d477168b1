/**
 * A partition task's replays of its retained log (a new goal's backfill, a site's re-bucketing):
 * one job per id at a time, later ones of the same id queued behind it, each finished job recorded
 * for the next snapshot to write with the state it produced (so a crash before that reruns it).
 */
import type { ReplayRecord } from '../store/index.js'

export interface ReplayJobsOptions {
  partition: number
  onError(err: unknown, where: string): void
  onProgress?(message: string, fields: Record<string, unknown>): void
}

export class ReplayJobs {
  readonly #o: ReplayJobsOptions
  readonly #running = new Map<string, Promise<void>>()
  #done: ReplayRecord[] = []
  #stopped = false

  constructor(o: ReplayJobsOptions) {
    this.#o = o
  }

  get size(): number {
    return this.#running.size
  }

  get stopped(): boolean {
    return this.#stopped
  }

  /** the running job of an id, if any */
  get(id: string): Promise<void> | undefined {
    return this.#running.get(id)
  }

  /** Runs `work` after the job of the same id under way; it resolves true when it finished, false when abandoned. */
  run(id: string, until: number, work: () => Promise<boolean>): void {
    const started = Date.now()
    const fields = { replay: id, partition: this.#o.partition, until }
    this.#o.onProgress?.('replay started', fields)
    const previous = this.#running.get(id) ?? Promise.resolve()
    const job = previous
      .then(work)
      .then((completed) => {
        if (completed && !this.#stopped) this.#done.push({ id, until, done: true })
        this.#o.onProgress?.(completed ? 'replay done' : 'replay abandoned', { ...fields, ms: Date.now() - started })
      })
      .catch((err) => this.#o.onError(err, `partition ${this.#o.partition}: replay ${id}`))
      .finally(() => {
        if (this.#running.get(id) === job) this.#running.delete(id)
      })
    this.#running.set(id, job)
  }

  /** records a replay as done without running it (what a finished one would have recorded) */
  markDone(r: ReplayRecord): void {
    this.#done.push(r)
  }

  /** the finished replays not written yet, handed to a snapshot */
  takeDone(): ReplayRecord[] {
    return this.#done.splice(0)
  }

  /** puts back the finished replays of a snapshot that failed */
  restoreDone(records: ReplayRecord[]): void {
    this.#done.push(...records)
  }

  /** Stops every job at its next chunk and waits for them. */
  async stop(): Promise<void> {
    this.#stopped = true
    await Promise.allSettled([...this.#running.values()])
  }
}
