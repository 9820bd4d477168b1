import t from 'tap'
import { CommanderError } from 'commander'
import { buildProgram } from './program.js'
import { planBench, type BenchFlags } from './bench-plan.js'

/** Runs the command line with output captured; the CLI's commands are never reached on a usage error. */
async function run(...args: string[]) {
  let out = ''
  let err = ''
  const program = buildProgram({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) })
  try {
    await program.parseAsync(['node', 'goalpost', ...args])
    return { code: 0, out, err }
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e
    return { code: e.exitCode, out, err }
  }
}

t.test('bad flags: a message naming the flag, exit code 2', async (t) => {
  const cases: [string[], RegExp][] = [
    [['bench', '--connections', 'many'], /option '--connections <n>' argument 'many' is invalid\. must be an integer from 1 to 10000/],
    [['bench', '--batch', '1001'], /'--batch <n>' argument '1001' is invalid/],
    [['bench', '--duration', '0'], /'--duration <seconds>' argument '0' is invalid\. must be a number of seconds above 0/],
    [['bench', '--url', 'ftp://x'], /'--url <url>' argument 'ftp:\/\/x' is invalid\. must be an http/],
    [['bench', '--kafka', 'localhost'], /'--kafka <brokers>' argument 'localhost' is invalid\. must be host:port/],
    [['bench', '--mix', 'pageview=1,click=1'], /'--mix <types>' argument .* "click" is not an event type/],
    [['bench', '--goals', '9'], /'--goals <n>' .* from 0 to 8/],
    [['bench', '--site-prefix', 'a b'], /'--site-prefix <id>' argument 'a b' is invalid/],
    [['bench', '--frobnicate'], /unknown option '--frobnicate'/],
    [['bench'], /give --url .* or --kafka/],
    [['bench', '--url', 'http://x', '--open-sessions', '150'], /--open-sessions must be a multiple of 100/],
    [['bench', '--url', 'http://x', '--batch', '10'], /--batch posts to \/api\/events, which needs a credential: give --key or --admin-token/],
    [['status', '--url', 'http://x'], /required option '--token <token>' not specified/],
    [['status', '--token', 't'], /required option '--url <url>' not specified/],
    [['serve', '--port', '70000'], /'--port <port>' argument '70000' is invalid/],
    [['replay-everything'], /unknown command 'replay-everything'/],
  ]
  const saved = process.env.GOALPOST_ADMIN_TOKEN
  delete process.env.GOALPOST_ADMIN_TOKEN
  t.teardown(() => { if (saved !== undefined) process.env.GOALPOST_ADMIN_TOKEN = saved })
  for (const [args, message] of cases) {
    const r = await run(...args)
    t.equal(r.code, 2, `${args.join(' ')}: exit code`)
    t.match(r.err, message, `${args.join(' ')}: message`)
  }
})

t.test('--help and --version exit 0', async (t) => {
  const help = await run('bench', '--help')
  t.equal(help.code, 0)
  t.match(help.out, /--events-per-session <n>/)
  t.match(help.out, /--compare/)
  const top = await run('--help')
  t.match(top.out, /serve[\s\S]*bench[\s\S]*status/, 'every command listed')
  const v = await run('--version')
  t.equal(v.code, 0)
  t.match(v.out, /^\d+\.\d+\.\d+/)
})

const flags = (over: Partial<BenchFlags> = {}): BenchFlags => ({
  prefix: 'goalpost', batch: 1, sites: 1, sitePrefix: 'bench', goals: 3, mix: [{ type: 'pageview', weight: 1 }],
  eventsPerSession: 6, openSessions: 1000, connections: 8, duration: 2, timeout: 30, verify: true, verifyTimeout: 60,
  retentionDays: 90, json: false, progress: true, ...over,
})

t.test('the plan: setup and verification need the URL and a credential', async (t) => {
  const url = new URL('http://127.0.0.1:9')
  const full = planBench(flags({ url, adminToken: 'a' }))
  if ('error' in full) throw new Error(full.error)
  t.same(full.setup, { url, token: 'a' })
  t.match(full.verify, { url, token: 'a', timeoutMs: 60_000 })
  t.same(full.target, { kind: 'http', url, batch: 1, key: 'a' })
  t.equal(full.durationMs, 2000)
  t.match(full.shape.run, /^[0-9a-f]{8}$/, 'a random run id')

  const anonymous = planBench(flags({ url }))
  if ('error' in anonymous) throw new Error(anonymous.error)
  t.equal(anonymous.setup, undefined)
  t.same(anonymous.verify, { skipped: 'no --admin-token or --key to read GET /api/goals with' })

  const kafka = planBench(flags({ kafka: ['b:9092'], prefix: 'p', batch: 50 }))
  if ('error' in kafka) throw new Error(kafka.error)
  t.same(kafka.target, { kind: 'kafka', brokers: ['b:9092'], prefix: 'p', batch: 50 })
  t.same(kafka.verify, { skipped: 'no --url to read GET /api/goals from' })

  const off = planBench(flags({ url, adminToken: 'a', verify: false }))
  t.same('verify' in off && off.verify, { skipped: '--no-verify' })
  t.same(planBench(flags({ url, sites: 3, sessions: 250 })), { error: '--sessions must be at least 100 × --sites: sessions go to sites in blocks of 100' })
  const sites = planBench(flags({ url, sites: 3, sitePrefix: 'load' }))
  t.same('shape' in sites && sites.shape.siteIds, ['load-1', 'load-2', 'load-3'])
  const json = planBench(flags({ url, json: true }))
  t.equal('progress' in json && json.progress, false, 'no progress bar beside JSON output')
})
