// docs/api.md §1, §5: the data directory on a real 64 MiB tmpfs, filled by a file. Ingestion refuses
// with 503 + Retry-After and /readyz says 503; once the file is gone the service heals by itself
// (no restart, no config write), and every acknowledged event is counted, nothing refused is.
import { unlink } from 'node:fs/promises'
import t from 'tap'
import {
  createGoal, createSite, goalIn, pageview, pollUntil, postEvent, settledGoals, startServer, uid,
  type Reply, type Server,
} from './helpers/index.js'
import { fillDisk, mountTmpfs, whereTmpfsMounts } from './helpers/tmpfs.js'

const HEAL_DEADLINE_MS = 10_000

async function readyz(server: Server): Promise<number> {
  return (await server.request('GET', '/readyz')).status
}

if (process.env.GOALPOST_TEST_LOG === 'kafka') {
  t.skip('the disk-full suite fills the embedded log\'s disk; the Kafka log keeps no data here')
} else if (whereTmpfsMounts(t, import.meta.url)) {
  t.test('disk full: 503 and not ready, then healed by itself; exactly the acknowledged events count', async (t) => {
    const dir = await mountTmpfs(t, 64)
    // snapshots every 200 ms, so the state store meets the full disk too
    const env = { GOALPOST_SNAPSHOT_INTERVAL_MS: '200' }
    let server = await startServer({ dataDir: dir, env })
    t.teardown(() => server.stop().catch(() => server.kill9()))
    const site = (await createSite(server)).site_id
    const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/paid' })
    const acked = new Set<string>()
    const refused = new Set<string>()
    const send = async (): Promise<Reply> => {
      const session = uid('s')
      const reply = await postEvent(server, pageview(site, session, '/paid'))
      if (reply.status === 202) acked.add(session)
      else refused.add(session)
      return reply
    }
    for (let i = 0; i < 20; i++) t.equal((await send()).status, 202, 'before the disk fills')

    const filler = await fillDisk(dir)
    // the log file's last page may take a few more events before the disk refuses one
    const first = await pollUntil(send, (r) => r.status !== 202, 20_000, 0)
    t.equal(first.status, 503, `refused with 503 once the disk is full (after ${acked.size - 20} more): ${first.text}`)
    t.match(first.headers.get('retry-after') ?? '', /^\d+$/, 'with Retry-After')
    t.match(first.json?.error, /nothing was stored/, 'saying nothing was stored')
    t.equal(await pollUntil(() => readyz(server), (s) => s === 503, 5000), 503, '/readyz says 503 while appends fail')
    t.equal((await server.request('GET', '/healthz')).status, 200, '/healthz still 200: the process serves')
    const again = await Promise.all(Array.from({ length: 5 }, send))
    t.same(again.map((r) => r.status), [503, 503, 503, 503, 503], 'the next appends try again and are refused again')
    const metrics = (await server.request('GET', '/metrics')).text
    const failures = Number(/^goalpost_log_append_failures_total\{kind="retryable"\} (\d+)/m.exec(metrics)?.[1] ?? 0)
    t.ok(failures >= 6, `append failures are counted (${failures})`)

    await unlink(filler)
    const freed = Date.now()
    t.equal(await pollUntil(() => readyz(server), (s) => s === 200, HEAL_DEADLINE_MS), 200,
      `/readyz 200 again without any traffic, ${Date.now() - freed} ms after the disk had room`)
    for (let i = 0; i < 10; i++) t.equal((await send()).status, 202, 'accepted again')

    const counted = (a: { total_sessions: number }) => a.total_sessions === acked.size
    const answer = await settledGoals(server, site, 1, counted)
    t.equal(answer.total_sessions, acked.size, `every acknowledged event is counted (${acked.size}), none of the ${refused.size} refused`)
    t.equal(goalIn(answer, goal.id)?.conversions, acked.size, 'and converts')

    await server.stop()
    server = await startServer({ dataDir: dir, env })
    const restarted = await settledGoals(server, site, 1, counted)
    t.equal(restarted?.total_sessions, acked.size, 'the same after a restart: nothing refused came back')
    t.equal(goalIn(restarted, goal.id)?.conversions, acked.size)
  })
}
