/**
 * The records a Fetch brought beyond what a read asked for, kept for the read that continues from
 * there: a replay reads a partition front to back in chunks smaller than a Fetch (4 MiB, ~7 000
 * events), and decoding those records again — or fetching them again — would be wasted. A few
 * partitions' worth at most; only a read starting exactly where one left off takes them.
 */
import type { LogRecord } from '../types.js'
import { LRUCache } from 'lru-cache'

/** what one Fetch brought */
export interface Fetched {
  records: LogRecord[]
  /** where the fetch after these records starts */
  next: number
  /** the fetch reached the last stable offset: nothing more was committed then */
  end: boolean
}

interface Ahead extends Fetched {
  /** one past the last record the earlier read returned: a read from here on to the first kept record continues it */
  from: number
}

/** each pins its Fetch's buffer (at most 4 MiB) while kept */
const MAX_KEPT = 8

export class ReadAhead {
  readonly #kept = new LRUCache<string, Ahead>({ max: MAX_KEPT })

  /**
   * Records kept for a read of `topic`/`partition` from `from`, handed over once. Offsets are not
   * dense (commit markers), so any `from` between the earlier read's end and the first kept record
   * continues it.
   */
  take(topic: string, partition: number, from: number): Fetched | undefined {
    const key = `${topic}\u0000${partition}`
    const ahead = this.#kept.get(key)
    if (ahead === undefined || from < ahead.from || from > ahead.records[0].offset) return undefined
    this.#kept.delete(key)
    return ahead
  }

  keep(topic: string, partition: number, ahead: Ahead): void {
    const key = `${topic}\u0000${partition}`
    this.#kept.set(key, ahead)
  }

  clear(): void {
    this.#kept.clear()
  }
}
