/**
 * Whether a failed append may succeed when the caller sends it again: the embedded log says so
 * with `canRetry` (embedded/errors.ts), kafkajs with `retriable` on its KafkaJSError. Anything
 * else, including a plain Error, is a fault of the service: retrying the same call cannot help.
 */
export function isRetryable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { canRetry, retriable } = err as { canRetry?: unknown; retriable?: unknown }
  return canRetry === true || retriable === true
}
