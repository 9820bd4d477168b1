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
import type { RawMessage } from './kafkajs-internals.js'

export interface AbortedTransaction {
  producerId: string
  firstOffset: string
}

/** a control record's key: version (int16), then type (int16): 0 abort, 1 commit */
const isAbortMarker = (m: RawMessage): boolean => m.key !== null && m.key.length >= 4 && m.key.readInt16BE(2) === 0

/** The data records of `messages` (in offset order) that belong to no aborted transaction. */
export function committedOnly(messages: RawMessage[], aborted: AbortedTransaction[] | undefined): RawMessage[] {
  const starts = (aborted ?? []).map((a) => ({ producerId: a.producerId, firstOffset: BigInt(a.firstOffset) }))
  starts.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const abortedProducers = new Set<string>()
  let next = 0
  return messages.filter((m) => {
    const offset = BigInt(m.offset)
    while (next < starts.length && starts[next].firstOffset <= offset) abortedProducers.add(starts[next++].producerId)
    const { producerId, inTransaction } = m.batchContext
    if (m.isControlRecord) {
      if (isAbortMarker(m)) abortedProducers.delete(producerId)
      return false
    }
    return !(inTransaction && abortedProducers.has(producerId))
  })
}
