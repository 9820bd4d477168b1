/**
 * A real single-node Apache Kafka broker (KRaft, controller and broker in one JVM) on 127.0.0.1,
 * run from Maven Central jars cached in `.cache/` (outside git). Tests get a broker in one of
 * three ways, in this order: GOALPOST_KAFKA_BROKERS names one; the run's shared broker launched by
 * `test/kafka-start.ts` (tap's `before`); or `startKafkaBroker()` for a private one that a test may
 * pause (SIGSTOP) without disturbing the test files running beside it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, openSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'
import { freePort, sleep } from './server.js'

export const KAFKA_VERSION = '4.1.1'
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const POM = join(ROOT, 'test', 'helpers', 'kafka', 'pom.xml')
export const KAFKA_JARS = join(ROOT, '.cache', `kafka-${KAFKA_VERSION}`, 'jars')
/**
 * Where a run's shared broker is described for its test processes. tap runs its `before` and
 * `after` scripts and every test file as children of one runner process, so the runner's pid names
 * the run: runs side by side (or a run with GOALPOST_KAFKA_BROKERS) never touch each other's broker.
 */
const RUNS_DIR = join(ROOT, '.cache')
const runFile = (runnerPid: number): string => join(RUNS_DIR, `kafka-test-broker-${runnerPid}.json`)
const READY_TIMEOUT_MS = 90_000
const STOP_TIMEOUT_MS = 15_000

export interface BrokerInfo {
  brokers: string
  pid: number
  dir: string
  startedAt: number
}

export interface KafkaBroker extends BrokerInfo {
  /** SIGSTOP: the broker hangs, its sockets stay open */
  pause(): void
  /** SIGCONT */
  resume(): void
  /** SIGTERM, then SIGKILL after a grace period; removes the data directory */
  stop(): Promise<void>
}

/** Fetches the broker's jars with Maven once; later calls find them in the cache. */
export function ensureKafkaJars(): string {
  if (existsSync(join(KAFKA_JARS, `kafka_2.13-${KAFKA_VERSION}.jar`))) return KAFKA_JARS
  const args = ['-B', '-q', '-f', POM, 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${KAFKA_JARS}`]
  const run = spawnSync('mvn', args, { stdio: ['ignore', 'inherit', 'inherit'] })
  if (run.error || run.status !== 0) {
    throw new Error(`mvn ${args.join(' ')} failed (${run.error?.message ?? `exit ${run.status}`}): Maven and Java are needed for the Kafka tests`)
  }
  return KAFKA_JARS
}

/**
 * A Kafka cluster id: 16 random bytes, base64url without padding (what `random-uuid` prints). Like
 * Kafka's own, never one that starts with '-': the storage tool would take it for an option.
 */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

function serverProperties(dir: string, port: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${join(dir, 'data')}`,
    // one replica of everything, few partitions for the internal topics: a fast start
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=4',
    'min.insync.replicas=1',
    'default.replication.factor=1',
    'num.partitions=1',
    'auto.create.topics.enable=false',
    'group.initial.rebalance.delay.ms=0',
    'group.min.session.timeout.ms=1000',
    // small segments and quick clean-up, fit for tests
    'log.segment.bytes=8388608',
    'log.retention.check.interval.ms=10000',
    'log.cleaner.backoff.ms=1000',
    'transaction.abort.timed.out.transaction.cleanup.interval.ms=2000',
    'transaction.remove.expired.transaction.cleanup.interval.ms=60000',
    'num.network.threads=2',
    'num.io.threads=4',
    '',
  ].join('\n')
}

const LOG4J = ['log4j.rootLogger=WARN, file', 'log4j.appender.file=org.apache.log4j.FileAppender', 'log4j.appender.file.File=${kafka.logs.dir}/server.log',
  'log4j.appender.file.layout=org.apache.log4j.PatternLayout', 'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n', ''].join('\n')

function javaArgs(dir: string, main: string[]): string[] {
  return [
    '-Xms256m', '-Xmx768m', '-XX:+UseG1GC', '-XX:TieredStopAtLevel=1', '-Xshare:auto',
    `-Dlog4j.configuration=file:${join(dir, 'log4j.properties')}`, `-Dkafka.logs.dir=${dir}`,
    '-cp', join(KAFKA_JARS, '*'), ...main,
  ]
}

/**
 * Formats a fresh KRaft storage and starts the broker detached (it outlives the calling process
 * until stopped). Resolves once the process runs; `waitForKafka` tells when it answers.
 */
export async function launchKafkaBroker(): Promise<BrokerInfo> {
  ensureKafkaJars()
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-kafka-'))
  const [port, controllerPort] = [await freePort(), await freePort()]
  const props = join(dir, 'server.properties')
  await writeFile(props, serverProperties(dir, port, controllerPort))
  await writeFile(join(dir, 'log4j.properties'), LOG4J)
  const format = spawnSync('java', javaArgs(dir, ['kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId()}`, '--config', props]), { encoding: 'utf8' })
  if (format.status !== 0) throw new Error(`kafka-storage format failed: ${format.error?.message ?? format.stderr}`)
  const out = openSync(join(dir, 'stdout.log'), 'a')
  const child = spawn('java', javaArgs(dir, ['kafka.Kafka', props]), { detached: true, stdio: ['ignore', out, out] })
  child.unref()
  if (child.pid === undefined) throw new Error('java did not start')
  return { brokers: `127.0.0.1:${port}`, pid: child.pid, dir, startedAt: Date.now() }
}

/** true while `pid` runs the broker of `dir`: a stale file's pid may belong to another process now */
function alive(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`-Dkafka.logs.dir=${dir}`)
  } catch {
    return false
  }
}

function portOpen(hostPort: string): Promise<boolean> {
  const [host, port] = hostPort.split(':')
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) })
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
  })
}

/** Waits until the broker answers metadata requests, or throws with the tail of its log. */
export async function waitForKafka(info: Pick<BrokerInfo, 'brokers' | 'pid' | 'dir'>, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  const admin = new Kafka({ brokers: [info.brokers], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin()
  try {
    while (Date.now() < deadline) {
      if (info.pid > 0 && !alive(info.pid, info.dir)) throw new Error(`the Kafka broker exited during start-up:\n${logTail(info.dir)}`)
      if (await portOpen(info.brokers)) {
        try {
          await admin.connect()
          const cluster = await admin.describeCluster()
          if (cluster.brokers.length > 0) return
        } catch {
          // not ready yet
        }
      }
      await sleep(200)
    }
    throw new Error(`the Kafka broker at ${info.brokers} was not ready within ${timeoutMs} ms:\n${logTail(info.dir)}`)
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

function logTail(dir: string): string {
  const lines: string[] = []
  for (const name of ['stdout.log', 'server.log']) {
    const file = join(dir, name)
    if (existsSync(file)) lines.push(...readFileSync(file, 'utf8').split('\n').slice(-20))
  }
  return lines.join('\n')
}

/** SIGTERM, SIGKILL after a grace period, then the data directory goes. */
export async function stopKafkaBroker(info: Pick<BrokerInfo, 'pid' | 'dir'>): Promise<void> {
  const running = (): boolean => alive(info.pid, info.dir)
  if (running()) {
    process.kill(info.pid, 'SIGCONT') // a paused broker cannot act on SIGTERM
    process.kill(info.pid, 'SIGTERM')
    const deadline = Date.now() + STOP_TIMEOUT_MS
    while (running() && Date.now() < deadline) await sleep(100)
    if (running()) process.kill(info.pid, 'SIGKILL')
    while (running()) await sleep(50)
  }
  await rm(info.dir, { recursive: true, force: true })
}

/** A private broker, ready to use, that the caller may pause and must stop. */
export async function startKafkaBroker(): Promise<KafkaBroker> {
  const info = await launchKafkaBroker()
  try {
    await waitForKafka(info)
  } catch (err) {
    await stopKafkaBroker(info)
    throw err
  }
  return {
    ...info,
    pause: () => process.kill(info.pid, 'SIGSTOP'),
    resume: () => process.kill(info.pid, 'SIGCONT'),
    stop: () => stopKafkaBroker(info),
  }
}

let shared: Promise<string[]> | undefined

/**
 * The broker this test run shares: GOALPOST_KAFKA_BROKERS when set, else the one `kafka-start.ts`
 * launched for the run (waiting until it answers).
 */
export function sharedKafkaBrokers(): Promise<string[]> {
  shared ??= (async () => {
    const fromEnv = process.env.GOALPOST_KAFKA_BROKERS
    if (fromEnv) return fromEnv.split(',').map((s) => s.trim()).filter(Boolean)
    const file = runFile(process.ppid)
    if (!existsSync(file)) {
      throw new Error(`no Kafka broker: set GOALPOST_KAFKA_BROKERS, or run through tap so that test/kafka-start.ts launches one (${file} is missing)`)
    }
    const info = JSON.parse(readFileSync(file, 'utf8')) as BrokerInfo
    await waitForKafka(info)
    return [info.brokers]
  })()
  return shared
}

const runnerAlive = (pid: number): boolean => existsSync(`/proc/${pid}`)

/** Used by the tap `before` script: launches the run's broker and describes it for the tests. */
export async function launchSharedBroker(): Promise<BrokerInfo | undefined> {
  if (process.env.GOALPOST_KAFKA_BROKERS) return undefined
  await mkdir(RUNS_DIR, { recursive: true })
  // brokers of runs that died before their `after`
  for (const name of await readdir(RUNS_DIR)) {
    const pid = Number(/^kafka-test-broker-(\d+)\.json$/.exec(name)?.[1])
    if (pid > 0 && !runnerAlive(pid)) await stopRunBroker(pid)
  }
  const info = await launchKafkaBroker()
  await writeFile(runFile(process.ppid), JSON.stringify(info))
  return info
}

/** Used by the tap `after` script: stops the broker of this run, if it launched one. */
export async function stopSharedBroker(): Promise<void> {
  await stopRunBroker(process.ppid)
}

async function stopRunBroker(runnerPid: number): Promise<void> {
  const file = runFile(runnerPid)
  if (!existsSync(file)) return
  const info = JSON.parse(readFileSync(file, 'utf8')) as BrokerInfo
  await stopKafkaBroker(info)
  await rm(file, { force: true })
}
