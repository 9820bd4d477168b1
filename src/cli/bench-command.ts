import { Command, Option } from 'commander'
import { BENCH_GOALS } from './bench-goals.js'
import { planBench, type BenchFlags } from './bench-plan.js'
import { benchReport } from './bench-report.js'
import { runBench } from './bench-run.js'
import { runCompare } from './compare.js'
import { DEFAULT_MIX } from './event-mix.js'
import { brokerList, eventMix, httpUrl, integer, matching, positiveSeconds } from './option-parsers.js'
import { usageError } from './usage-error.js'

export function benchCommand(): Command {
  return new Command('bench')
    .description('drive a synthetic stream of analytics events into the service (or its Kafka topic) and report throughput, latency and whether everything acknowledged was counted')
    .option('--url <url>', 'the service: events go to <url>/api/event(s); sites, goals and counts go through its API', httpUrl)
    .option('--kafka <brokers>', 'produce straight into <prefix>.events on these brokers (host:port,...) instead of posting', brokerList)
    .addOption(new Option('--prefix <prefix>', 'topic prefix of the service').env('GOALPOST_KAFKA_PREFIX').default('goalpost')
      .argParser(matching(/^[A-Za-z0-9._-]{1,200}$/, 'letters, digits, ".", "_" or "-"')))
    .addOption(new Option('--admin-token <token>', 'create the sites and goals first, and read the counts back').env('GOALPOST_ADMIN_TOKEN'))
    .option('--key <key>', 'API key for POST /api/events (default: the admin token)')
    .option('--batch <n>', 'events per request: 1 posts single events to /api/event, more post batches to /api/events', integer(1, 1000), 1)
    .option('--sites <n>', 'sites to spread sessions over', integer(1, 1000), 1)
    .option('--site-prefix <id>', 'site id, or prefix of site ids <id>-1 … <id>-N', matching(/^[A-Za-z0-9._-]{1,56}$/, 'a site id of letters, digits, ".", "_" or "-", at most 56 characters'), 'bench')
    .option('--goals <n>', `goals per site (at most ${BENCH_GOALS.length})`, integer(0, BENCH_GOALS.length), 3)
    .addOption(new Option('--mix <types>', 'event types and their weights, type=weight,...').argParser(eventMix).default(eventMix(DEFAULT_MIX), DEFAULT_MIX))
    .option('--events-per-session <n>', 'events of each session; 1 opens a new session with every event', integer(1, 1000), 6)
    .option('--open-sessions <n>', 'sessions under way at a time (a multiple of 100): a session\'s events are this many events apart', integer(100, 10_000_000), 10_000)
    .option('--sessions <n>', 'reuse a pool of this many sessions instead of ever-new ones', integer(1, 1_000_000_000))
    .option('--connections <n>', 'requests in flight at once', integer(1, 10_000), 64)
    .option('--duration <seconds>', 'how long to send', positiveSeconds, 10)
    .option('--timeout <seconds>', 'how long one request may wait for its answer', positiveSeconds, 30)
    .option('--run <id>', 'prefix of this run\'s session ids (default: random, so every run brings new sessions)', matching(/^[A-Za-z0-9]{1,16}$/, 'up to 16 letters or digits'))
    .option('--no-verify', 'skip reading GET /api/goals afterwards')
    .option('--verify-timeout <seconds>', 'how long to wait for the service to count everything', positiveSeconds, 60)
    .addOption(new Option('--retention-days <n>', 'the service\'s retention, to validate events as it does (--kafka)').env('GOALPOST_RETENTION_DAYS').default(90).argParser(integer(1, 36_500)))
    .option('--json', 'print the result as JSON instead of tables')
    .option('--no-progress', 'no progress bar')
    .option('--compare', 'run the side-by-side ingest bench of bench/ instead (bare uWS, durable minimum, the service; needs a source checkout, wrk and taskset)')
    .action(async function (this: Command) {
      const opts = this.opts<BenchFlags & { compare?: boolean }>()
      const out = this.configureOutput()
      if (opts.compare) {
        const extra = this.getOptionValueSource('duration') === 'cli' ? ['--seconds', String(opts.duration)] : []
        process.exitCode = await runCompare(extra)
        return
      }
      const plan = planBench({ ...opts, json: opts.json ?? false })
      if ('error' in plan) usageError(this, plan.error)
      const stop = new AbortController()
      // Ctrl-C stops sending; answers in flight are awaited and the run is reported as it stands
      const onSigint = () => stop.abort()
      process.once('SIGINT', onSigint)
      try {
        const note = plan.json ? () => {} : (line: string) => out.writeErr?.(`${line}\n`)
        const result = await runBench(plan, stop.signal, note)
        // the credential stays out of what may end up in a log
        const target = { ...plan.target, key: undefined }
        out.writeOut?.(plan.json ? `${JSON.stringify({ target, shape: { ...plan.shape, goals: plan.shape.goals.map((g) => g.body) }, ...result })}\n` : `${benchReport(plan, result)}\n`)
        if ('ok' in result.verification && !result.verification.ok) process.exitCode = 1
      } finally {
        process.off('SIGINT', onSigint)
      }
    })
}
