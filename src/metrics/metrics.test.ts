import t from 'tap'
import { createMetrics } from './index.js'

t.test('every metric name starts with goalpost_ and says no word twice in a row', async (t) => {
  const text = await createMetrics().registry.metrics()
  const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1])
  t.ok(names.includes('goalpost_process_cpu_user_seconds_total'), 'process metrics carry the service prefix once')
  t.ok(names.includes('goalpost_log_append_failures_total'), 'append failures are counted')
  t.same(names.filter((n) => !n.startsWith('goalpost_')), [], 'one prefix for all')
  t.same(names.filter((n) => /(^|_)([a-z]+)_\2(_|$)/.test(n)), [], 'no doubled word such as process_process')
})
