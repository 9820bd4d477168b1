// A stop signal while state is being restored: the process snapshots what it restored and exits
// cleanly, and the next start answers exactly as before.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { createGoal, createSite, getGoals, makeDataDir, pageview, pollUntil, postEvents, settledGoals, startServer, type GoalsAnswer } from './helpers/index.js'

t.test('SIGTERM during a restore exits 0 and loses nothing', async (t) => {
  const dataDir = await makeDataDir(t)
  // no snapshot before the kill: the restart must replay the whole log, which takes a while
  const env = { GOALPOST_ADMIN_TOKEN: `admin-${randomBytes(8).toString('hex')}`, GOALPOST_SNAPSHOT_INTERVAL_MS: '3600000', GOALPOST_EXACT_THRESHOLD: '100000' }
  const first = await startServer({ t, dataDir, env })
  const site = (await createSite(first)).site_id
  await createGoal(first, { site_id: site, goal_type: 'pageview', match_path: '/buy/*' })
  const sessions = 6000
  for (let i = 0; i < sessions; i += 500) {
    const batch = []
    for (let j = i; j < i + 500; j++) batch.push(pageview(site, `s${j}`, j % 5 === 0 ? `/buy/${j}` : '/'))
    t.equal((await postEvents(first, batch)).status, 202)
  }
  const before = await settledGoals(first, site, 7, (a) => a.total_sessions === sessions)
  await first.kill9()

  const second = await startServer({ t, dataDir, env, ready: false })
  t.equal(await second.stop(), 0, 'a stop during the restore exits 0')
  t.match(second.stdout(), /"msg":"stopping"/)
  t.comment(/"msg":"ready"/.test(second.stdout()) ? 'the stop came after the restore' : 'the stop came during the restore')
  t.notMatch(second.stderr(), /goalpost:/, 'no start-up error')

  const third = await startServer({ t, dataDir, env })
  const after = await pollUntil(async () => (await getGoals(third, site, 7)).json as GoalsAnswer, (a) => a.total_sessions === sessions, 10_000, 100)
  t.equal(before.total_sessions, sessions, 'exact below the threshold')
  t.same(after.goals.map((g) => g.conversions), before.goals.map((g) => g.conversions), 'the same conversions')
  t.equal(after.total_sessions, sessions)
})
