/**
 * Which fetched records a read_committed reader may see. A read_committed Fetch still returns the
 * records of aborted transactions below the last stable offset, with a list of the aborted
 * transactions (producer id, first offset) that overlap the fetched range; the client drops them.
 *
 * kafkajs 2.2.4 (consumer/filterAbortedMessages.js) gets this wrong in two ways, and records of
 * aborted transactions become readable: it takes the list to be ordered by first offset, but the
 * broker orders it by where each transaction ended (its abort marker), and it starts at most one
 * aborted transaction per record, while a fetch that begins inside several must start them all.
 * Both show whenever transactions of several producers interleave in a partition and more than one
 * of them aborts — exactly what a hung broker leaves behind: every open transaction is aborted when
 * its producer is fenced or times out, in any order. This is the Java client's rule instead: the
 * list sorted by first offset, every transaction whose first offset has been reached started,
 * a producer's transactional records dropped from there until its abort marker.
 */

export interface AbortedTransaction {
  producerId: string
  firstOffset: string
}

/**
 * The rule above, for one fetched partition read in offset order: `reach(offset)` as each record
 * (or batch, with its last offset) comes, then `aborts(producerId)` says whether that producer's
 * transactional records are dropped there, and `ended(producerId)` at its abort marker. Offsets
 * are numbers (they stay far below 2^53); producer ids are whatever the decoder gives.
 */
export class AbortedTransactions<P> {
  readonly #starts: Array<{ producerId: P; firstOffset: number }>
  readonly #open = new Set<P>()
  #next = 0

  constructor(list: ReadonlyArray<{ producerId: P; firstOffset: number }>) {
    this.#starts = list.length > 1 ? [...list].sort((a, b) => a.firstOffset - b.firstOffset) : [...list]
  }

  /** starts every aborted transaction whose first offset is at or before `offset` */
  reach(offset: number): void {
    const starts = this.#starts
    while (this.#next < starts.length && starts[this.#next].firstOffset <= offset) this.#open.add(starts[this.#next++].producerId)
  }

  aborts(producerId: P): boolean {
    return this.#open.has(producerId)
  }

  /** the producer's abort marker: its records after it are its next transaction's */
  ended(producerId: P): void {
    this.#open.delete(producerId)
  }
}

/** What the filter reads of a fetched record (kafkajs' decoded message and our own decoder's both have it). */
export interface TransactionalRecord {
  offset: string
  key: Buffer | null
  isControlRecord?: boolean
  /** of the record batch the record came in */
  batchContext: { producerId: string; inTransaction: boolean }
}

/** a control record's key: version (int16), then type (int16): 0 abort, 1 commit */
const isAbortMarker = (m: TransactionalRecord): boolean => m.key !== null && m.key.length >= 4 && m.key.readInt16BE(2) === 0

/** The data records of `messages` (in offset order) that belong to no aborted transaction. */
export function committedOnly<M extends TransactionalRecord>(messages: M[], aborted: AbortedTransaction[] | undefined): M[] {
  const transactions = new AbortedTransactions((aborted ?? []).map((a) => ({ producerId: a.producerId, firstOffset: Number(a.firstOffset) })))
  return messages.filter((m) => {
    transactions.reach(Number(m.offset))
    const { producerId } = m.batchContext
    if (m.isControlRecord) {
      if (isAbortMarker(m)) transactions.ended(producerId)
      return false
    }
    return !(m.batchContext.inTransaction && transactions.aborts(producerId))
  })
}
