/**
 * Runs a node's snapshots one at a time, in the order they were asked for. LevelDB takes each
 * committed batch into its memtable on a thread of its own, and four partitions committing at once
 * put four such threads beside the event loop on a busy core: under saturation on one core the
 * loop waited 31–49 ms for the core within single turns while it ran 10–20 ms of its own, and one
 * put of a 1 MB value stalled it 107 ms. Queued, a commit shares the core with the loop alone.
 */
export class SnapshotQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /** Runs `snapshot` once every snapshot queued before it has ended, written or failed. */
  run(snapshot: () => Promise<void>): Promise<void> {
    const done = this.#tail.then(snapshot)
    this.#tail = done.catch(() => undefined)
    return done
  }
}
