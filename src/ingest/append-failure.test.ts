/**
 * What a refused append answers (docs/api.md §1): 503 + Retry-After when retrying can help, 500 when
 * it cannot; either way the refusal is counted, and the next append tries the log again.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { tempConfigLog } from '../../test/helpers/config-log.js'
import { Authenticator, LoginLimiter } from '../auth/index.js'
import { Catalog } from '../catalog/index.js'
import type { Handler, HttpServer, Request } from '../http/index.js'
import { EmbeddedLog, readEvent } from '../log/index.js'
import { writeFully } from '../log/embedded/data-file.js'
import { createMetrics } from '../metrics/index.js'
import { ingestRoutes } from './index.js'
import { initHash } from '../sketch/index.js'

type Mode = 'ok' | 'disk-full' | 'bug'

t.before(initHash)

t.test('a refused append answers 503 or 500 by what refused it, and the next one tries again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-ingest-'))
  let mode: Mode = 'ok'
  const log = await EmbeddedLog.open({
    dir,
    probeMs: 60_000,
    frameWriter: async (handle, bytes, position) => {
      if (mode === 'disk-full') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      if (mode === 'bug') throw new TypeError('cannot read properties of undefined')
      await writeFully(handle, bytes, position)
    },
  })
  t.teardown(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  await log.createTopic({ name: 'events', partitions: 1 })
  const catalog = new Catalog(await tempConfigLog(t))
  await catalog.load()
  await catalog.put('site', 's', { site_id: 's', domain: null, timezone: 'UTC', created_at: new Date().toISOString() })
  const metrics = createMetrics()
  const handlers = new Map<string, Handler>()
  const server = { route: (method: string, path: string, handler: Handler) => handlers.set(`${method} ${path}`, handler) }
  const logged: unknown[] = []
  ingestRoutes(server as unknown as HttpServer, {
    log, topic: 'events', catalog, auth: new Authenticator(catalog, 'admin'), logins: new LoginLimiter(), metrics, retentionDays: 90, botFilter: true,
    maxPending: 1000, rateLimitSite: 0, rateLimitClient: 0, onError: (err) => void logged.push(err),
  })
  const post = (session: string) => {
    const req = {
      method: 'POST', path: '/api/event', query: new URLSearchParams(), headers: {}, ip: '127.0.0.1', secure: false,
      body: Buffer.from(JSON.stringify({ type: 'pageview', site_id: 's', session_id: session, path: '/' })),
    } satisfies Request
    return handlers.get('POST /api/event')!(req)
  }
  const failures = async (kind: string) =>
    (await metrics.logAppendFailures.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0

  t.match(await post('a'), { status: 202 })
  mode = 'disk-full'
  t.match(await post('b'), { status: 503, headers: { 'Retry-After': '1' }, body: { error: /nothing was stored, retry shortly/ } })
  t.equal(log.healthy(), false)
  t.match(await post('c'), { status: 503 }, 'the next append tries the log again')
  t.equal(await failures('retryable'), 2)
  t.same(logged, [], 'passing trouble is reported by the log, not once per request')
  mode = 'bug'
  t.match(await post('d'), { status: 500, body: { error: 'the event log failed to take the events; nothing was stored' } })
  t.equal(await failures('fatal'), 1)
  t.match(logged, [{ code: 'LOG_STORAGE_FAILED' }], 'a fault is logged')
  mode = 'ok'
  t.match(await post('e'), { status: 202 }, 'accepted again once the log takes writes')
  t.equal(log.healthy(), true)
  const stored = await log.read('events', 0, 0, 10)
  t.same(stored.map((r) => readEvent(r.value).session_id), ['a', 'e'], 'only the accepted events are in the log')
})
