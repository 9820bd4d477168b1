/**
 * Failures of a log (embedded or Kafka), each with a code. `canRetry` says whether the same call
 * may succeed later unchanged (ingest maps those to 503 + Retry-After, the others to 500).
 */
export const LOG_ERRORS = {
  LOG_CLOSED: { message: 'the log is closed', canRetry: true },
  LOG_FULL: { message: 'too many records wait for durability', canRetry: true },
  LOG_WRITE_FAILED: { message: 'the durable write failed; nothing was stored', canRetry: true },
  LOG_UNAVAILABLE: { message: 'the log is unreachable or did not answer in time; nothing was stored', canRetry: true },
  /**
   * Kafka only: a transaction's commit was sent but its outcome could not be learnt before the
   * hard deadline (the broker hung mid-commit). The records may or may not become visible.
   */
  // not retryable: a retry may store the records twice, and an answer that invites one (503) must
  // mean the records never become visible
  LOG_OUTCOME_UNKNOWN: { message: 'the commit outcome is unknown; the records may become visible', canRetry: false },
  /**
   * Kafka only: another writer claimed the partition (a newer owner); this one can never write it
   * again. Nothing of the refused append is visible.
   */
  LOG_FENCED: { message: 'another writer claimed the partition; this one is fenced', canRetry: false },
  LOG_REFUSED: { message: 'the broker refused the request', canRetry: false },
  /**
   * Kafka only: a record batch that cannot be decoded (a codec's data that does not decompress, a
   * record that runs past its batch). Reading it again gives the same bytes: it stops its
   * partition, or is set aside, as the operator chose (GOALPOST_KAFKA_UNREADABLE_BATCH).
   */
  LOG_UNREADABLE: { message: 'a record batch cannot be read', canRetry: false },
  /**
   * Kafka only: a config write the broker committed, which this node has not read back and applied
   * in time. It is stored and takes effect once read; writing it again is not needed.
   */
  LOG_NOT_APPLIED: { message: 'the write is stored, but this node has not applied it yet', canRetry: false },
  LOG_STORAGE_FAILED: { message: 'the storage refused the write for a reason retrying cannot fix; nothing was stored', canRetry: false },
  LOG_UNKNOWN_TOPIC: { message: 'unknown topic', canRetry: false },
  LOG_TOPIC_CONFLICT: { message: 'the topic exists with another partition count', canRetry: false },
  LOG_BAD_ARGUMENT: { message: 'invalid argument', canRetry: false },
} as const

export type LogErrorCode = keyof typeof LOG_ERRORS

export class LogError extends Error {
  readonly code: LogErrorCode
  readonly canRetry: boolean

  constructor(code: LogErrorCode, detail?: string, options?: { cause?: unknown }) {
    const base = LOG_ERRORS[code].message
    super(detail === undefined ? base : `${base}: ${detail}`, options)
    this.name = 'LogError'
    this.code = code
    this.canRetry = LOG_ERRORS[code].canRetry
  }
}

/**
 * Operating-system and LevelDB codes of failures that can pass by themselves: a full disk or
 * quota, an I/O error, too many open files. classic-level reports LevelDB's IOError status as
 * LEVEL_IO_ERROR ("IO error: …/000003.log: No space left on device") and a failed open as
 * LEVEL_DATABASE_NOT_OPEN with the reason as its cause.
 */
const PASSING = new Set(['LEVEL_IO_ERROR', 'ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY', 'EROFS'])

function passes(err: unknown, depth = 0): boolean {
  if (depth > 4 || typeof err !== 'object' || err === null) return false
  const { code, cause } = err as { code?: unknown; cause?: unknown }
  return (typeof code === 'string' && PASSING.has(code)) || passes(cause, depth + 1)
}

/** A storage failure as a LogError: retryable when it is one that can pass, a bug otherwise. */
export function storageFailure(cause: unknown, detail?: string): LogError {
  if (cause instanceof LogError) return cause
  return new LogError(passes(cause) ? 'LOG_WRITE_FAILED' : 'LOG_STORAGE_FAILED', detail, { cause })
}

/**
 * A record batch that cannot be decoded, with where it lies and its bytes: a dead-letter store
 * keeps them, and every message names the topic, partition, offsets, codec and the underlying error.
 */
export class UnreadableBatch extends LogError {
  constructor(
    readonly topic: string,
    readonly partition: number,
    /** the batch's first and last offsets */
    readonly baseOffset: number,
    readonly lastOffset: number,
    readonly codec: string,
    /** the whole batch as the broker sent it */
    readonly bytes: Buffer,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause)
    super('LOG_UNREADABLE', `${topic} partition ${partition}, offsets ${baseOffset}-${lastOffset} (${codec}): ${why}`, { cause })
    this.name = 'UnreadableBatch'
  }
}
