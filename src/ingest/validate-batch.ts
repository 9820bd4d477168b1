import { LIMITS } from '../schema/index.js'
import type { Accepted, Dropped, IngestContext } from './context.js'
import { validateEvent } from './validate-event.js'

export interface BatchProblem {
  index: number
  error: string
}

export type BatchResult =
  | { ok: true; results: (Accepted | Dropped)[]; accepted: number }
  | { ok: false; error: string; errors: BatchProblem[] }

function summary(problems: BatchProblem[], total: number): string {
  const first = problems[0]
  const verb = problems.length === 1 ? 'is' : 'are'
  return `${problems.length} of ${total} events ${verb} invalid; first: events[${first.index}]: ${first.error}`
}

/**
 * Validates a POST /api/events body, all or nothing (docs/api.md §1): either every event is accepted
 * or dropped as a bot (`accepted` counts both), or the answer lists every bad index.
 * Takes ownership of `raw` like validateEvent.
 *
 * @example
 * const r = validateBatch(JSON.parse(body), ctx)
 * if (!r.ok) answer(400, { error: r.error, errors: r.errors })
 */
export function validateBatch(raw: unknown, ctx: IngestContext): BatchResult {
  if (!Array.isArray(raw)) return { ok: false, error: 'body must be a JSON array of events', errors: [] }
  if (raw.length === 0) return { ok: false, error: 'batch is empty', errors: [] }
  if (raw.length > LIMITS.batchEvents) {
    return { ok: false, error: `batch has more than ${LIMITS.batchEvents} events`, errors: [] }
  }
  const results: (Accepted | Dropped)[] = []
  const problems: BatchProblem[] = []
  for (let index = 0; index < raw.length; index++) {
    const item: unknown = raw[index]
    const result =
      typeof item === 'object' && item !== null && !Array.isArray(item)
        ? validateEvent(item, ctx)
        : ({ kind: 'reject', error: 'event must be a JSON object' } as const)
    if (result.kind === 'reject') problems.push({ index, error: result.error })
    // once one event failed the batch is refused: keep checking, stop collecting
    else if (problems.length === 0) results.push(result)
  }
  if (problems.length > 0) return { ok: false, error: summary(problems, raw.length), errors: problems }
  return { ok: true, results, accepted: results.length }
}
