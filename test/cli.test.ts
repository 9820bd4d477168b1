// The operator CLI (dist/cli/main.js) against the real service: `goalpost bench` drives a stream
// and must report what the service counted; `goalpost serve` runs the service.
import { spawn } from 'node:child_process'
import t, { type Test } from 'tap'
import { CLI, ROOT, runCli } from './helpers/cli.js'
import { freePort, getGoals, makeDataDir, pollUntil, sleep, startServer, type GoalsAnswer } from './helpers/index.js'

/** Sum of a counter's samples whose labels include `label`, from Prometheus text. */
function counter(text: string, name: string, label: string): number {
  let sum = 0
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) && line.includes(label)) sum += Number(line.split(' ').pop())
  return sum
}

interface BenchJson {
  load: { ok: number; okEvents: number; requests: number; byStatus: Record<string, number>; errors: Record<string, number>; latencyMs: { p50: number; p99: number; max: number } }
  expected: { siteId: string; events: number; sessions: number; conversions: number[] }[]
  verification: { ok: boolean; checks: { counted: { sessions: number; conversions: number[] } }[] }
  shape: { goals: { goal_type: string; match_path?: string; match_event?: string }[] }
}

// sessions counted exactly at any size, so that total_sessions can be compared to the last one
const server = await startServer({ t, env: { GOALPOST_EXACT_THRESHOLD: '1000000' } })
const token = server.adminToken!

async function bench(t: Test, site: string, extra: string[]): Promise<BenchJson> {
  const ran = await runCli(['bench', '--url', server.url, '--admin-token', token, '--site-prefix', site, '--duration', '3', '--connections', '8', '--json', ...extra])
  t.equal(ran.code, 0, `goalpost bench exits 0\n${ran.stderr}`)
  return JSON.parse(ran.stdout) as BenchJson
}

t.test('goalpost bench reports what the service counted: sessions and every goal\'s conversions', async (t) => {
  const acceptedBefore = counter((await server.request('GET', '/metrics')).text, 'goalpost_ingest_events_total', 'outcome="accepted"')
  const r = await bench(t, 'cli-single', ['--events-per-session', '4', '--open-sessions', '200', '--goals', '4'])
  t.ok(r.load.ok > 50, `a few seconds of load acknowledged ${r.load.ok} events`)
  t.same(Object.keys(r.load.byStatus), ['202'], 'every answer a 202')
  t.same(r.load.errors, {}, 'no request went unanswered')
  t.ok(r.load.latencyMs.p50 > 0 && r.load.latencyMs.p99 >= r.load.latencyMs.p50 && r.load.latencyMs.max >= r.load.latencyMs.p99, 'latency percentiles in order')
  t.equal(r.verification.ok, true, 'the CLI found its counts in GET /api/goals')

  // the bench stops sending at the deadline and waits for every answer: the counts are exact
  const text = (await server.request('GET', '/metrics')).text
  t.equal(counter(text, 'goalpost_ingest_events_total', 'outcome="accepted"') - acceptedBefore, r.load.okEvents, 'the service accepted exactly the events the bench saw acknowledged')
  const [expected] = r.expected
  const answer = await pollUntil(async () => (await getGoals(server, 'cli-single', 2)).json as GoalsAnswer, (a) => a.total_sessions === expected.sessions)
  t.equal(answer.total_sessions, expected.sessions, 'total_sessions is the bench\'s count of distinct sessions')
  t.equal(answer.goals.length, 4, 'the bench created its four goals')
  const byMatch = (g: { match_path?: string; match_event?: string }) => answer.goals.find((x) => (x.match_path ?? x.match_event) === (g.match_path ?? g.match_event))
  t.same(r.shape.goals.map((g) => byMatch(g)?.conversions), expected.conversions, 'each goal\'s conversions as the bench expected')
  t.same(r.verification.checks[0].counted.conversions, expected.conversions, 'and as it reported')
  t.ok(expected.conversions.some((c) => c > 0), 'some sessions converted')
})

t.test('goalpost bench --batch posts to /api/events; a second run adds to the first', async (t) => {
  const first = await bench(t, 'cli-batch', ['--batch', '50', '--events-per-session', '1', '--goals', '2'])
  const second = await bench(t, 'cli-batch', ['--batch', '50', '--events-per-session', '1', '--goals', '2'])
  for (const r of [first, second]) {
    t.equal(r.verification.ok, true)
    t.equal(r.load.okEvents, r.load.ok * 50, 'fifty events per acknowledged request')
    t.equal(r.expected[0].sessions, r.load.okEvents, 'fresh sessions: one per event')
  }
  const answer = (await getGoals(server, 'cli-batch', 2)).json as GoalsAnswer
  t.equal(answer.total_sessions, first.load.okEvents + second.load.okEvents, 'the runs used different sessions')
})

t.test('goalpost bench names what is wrong with its flags and exits 2', async (t) => {
  const ran = await runCli(['bench', '--url', server.url, '--connections', '0'])
  t.equal(ran.code, 2)
  t.match(ran.stderr, /option '--connections <n>' argument '0' is invalid/)
})

t.test('goalpost serve runs the service and stops cleanly on SIGTERM', async (t) => {
  const port = await freePort()
  const dataDir = await makeDataDir(t)
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, CLI, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd: ROOT, env: { ...process.env, GOALPOST_ADMIN_TOKEN: 'serve-test-token', GOALPOST_PORT: '1', GOALPOST_LOG_LEVEL: 'warn' }, stdio: 'ignore',
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(() => { child.kill('SIGKILL') })
  const ready = await pollUntil(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
    await res?.arrayBuffer()
    return res?.status
  }, (s) => s === 200, 20_000, 100)
  t.equal(ready, 200, 'ready on the --port given (the flag wins over GOALPOST_PORT)')
  const sites = await fetch(`http://127.0.0.1:${port}/api/sites`, { headers: { authorization: 'Bearer serve-test-token' } })
  t.equal(sites.status, 200, 'the admin token came through the environment')
  await sites.arrayBuffer()
  child.kill('SIGTERM')
  const code = await Promise.race([exited, sleep(15_000).then(() => 'timeout')])
  t.equal(code, 0, 'a clean exit')
})

t.test('goalpost status prints every partition with its owner', async (t) => {
  const server = await startServer({ t })
  const ran = await runCli(['status', '--url', server.url, '--token', server.adminToken!])
  t.equal(ran.code, 0, ran.stderr)
  t.match(ran.stdout, /embedded log, 1 member, 4 partitions/)
  for (let p = 0; p < 4; p++) t.match(ran.stdout, new RegExp(`\\n${p}\\s+${server.url.replace(/[.]/g, '\\.')}`), `partition ${p} and its owner`)
  const refused = await runCli(['status', '--url', server.url, '--token', 'wrong'])
  t.not(refused.code, 0, 'a wrong token fails')
})
