/**
 * Failures of a log (embedded or Kafka), each with a code. `canRetry` says whether the same call
 * may succeed later unchanged (ingest maps those to 503 + Retry-After).
 */
export const LOG_ERRORS = {
  LOG_CLOSED: { message: 'the log is closed', canRetry: false },
  LOG_FULL: { message: 'too many records wait for durability', canRetry: true },
  LOG_WRITE_FAILED: { message: 'the durable write failed; nothing was stored', canRetry: true },
  LOG_UNAVAILABLE: { message: 'the log is unreachable or did not answer in time; nothing was stored', canRetry: true },
  /**
   * Kafka only: a transaction's commit was sent but its outcome could not be learnt before the
   * hard deadline (the broker hung mid-commit). The records may or may not become visible.
   */
  LOG_OUTCOME_UNKNOWN: { message: 'the commit outcome is unknown; the records may become visible', canRetry: true },
  LOG_REFUSED: { message: 'the broker refused the request', canRetry: false },
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
