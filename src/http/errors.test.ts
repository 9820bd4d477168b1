import t from 'tap'
import { LogError } from '../log/embedded/index.js'
import { fail, isRetryable } from './errors.js'

t.test('passing trouble is retryable, faults of the service are not', async (t) => {
  t.equal(isRetryable(new LogError('LOG_WRITE_FAILED')), true, 'a failed durable write')
  t.equal(isRetryable(new LogError('LOG_FULL')), true, 'backpressure')
  t.equal(isRetryable(new LogError('LOG_STORAGE_FAILED')), false)
  t.equal(isRetryable(new LogError('LOG_BAD_ARGUMENT')), false)
  t.equal(isRetryable(Object.assign(new Error('leader not available'), { retriable: true })), true, 'a kafkajs retriable error')
  t.equal(isRetryable(Object.assign(new Error('record too large'), { retriable: false })), false)
  t.equal(isRetryable(new TypeError('x is not a function')), false)
  t.equal(isRetryable('oops'), false)
  t.equal(isRetryable(null), false)
})

t.test('the log refusals answer as docs/api.md §1 says', async (t) => {
  t.match(fail('LOG_UNAVAILABLE', { headers: { 'Retry-After': '1' } }), { status: 503, headers: { 'Retry-After': '1' }, body: { error: /nothing was stored/ } })
  t.match(fail('LOG_FAILED'), { status: 500, body: { error: /nothing was stored/ } })
})
