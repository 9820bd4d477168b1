import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { send, type Reply, type RequestOptions } from './http.js'
import { sharedKafkaBrokers } from './kafka-broker.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const ENTRY = join(ROOT, 'dist', 'main.js')

/** docs/api.md §3: "an event acknowledged 1 s ago is counted"; the margin covers request latency. */
export const FRESHNESS_MS = 1000
const SETTLE_MARGIN_MS = 300
const READY_TIMEOUT_MS = 20_000
const STOP_TIMEOUT_MS = 15_000
const OUTPUT_CAP = 4 * 1024 * 1024

/** The part of a tap test these functions need: somewhere to register clean-up. */
export interface Teardown {
  teardown(fn: () => unknown): void
}

export interface StartOptions {
  /** extra environment; a value of undefined removes the variable (e.g. GOALPOST_ADMIN_TOKEN) */
  env?: Record<string, string | undefined>
  /** reuse a data directory (restarts); by default a fresh temporary one is made and removed */
  dataDir?: string
  /** when given, the process is stopped (and its own data directory removed) at teardown */
  t?: Teardown
  /** false: resolve as soon as the server listens, before /readyz says 200 (state still restoring) */
  ready?: boolean
}

export interface Server {
  readonly url: string
  readonly port: number
  readonly dataDir: string
  /** the token passed as GOALPOST_ADMIN_TOKEN, undefined when it was left unset */
  readonly adminToken: string | undefined
  stdout(): string
  stderr(): string
  /** stdout and stderr, labelled, for failure messages */
  output(): string
  /** SIGTERM, then waits for the exit; resolves to the exit code (null when killed by a signal) */
  stop(): Promise<number | null>
  /** SIGKILL, then waits for the exit */
  kill9(): Promise<void>
  /** SIGSTOP: the process freezes with its sockets open (a stalled node, as a long GC pause or a hung VM) */
  pause(): void
  /** SIGCONT */
  resume(): void
  exited(): boolean
  /** the statuses /readyz answered while the server was starting (connection refusals left out) */
  readyStatuses(): number[]
  request(method: string, path: string, opts?: RequestOptions): Promise<Reply>
  /** a request carrying the admin token */
  admin(method: string, path: string, body?: unknown): Promise<Reply>
  /** resolves once every event acknowledged so far must be visible to queries (docs/api.md §3 freshness) */
  settle(): Promise<void>
}

const serversByDir = new Map<string, Set<Server>>()

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A port nobody listens on right now: bind port 0, read the number, close. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

/** A fresh temporary data directory, removed at teardown after every server using it stopped. */
export async function makeDataDir(t?: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-test-'))
  t?.teardown(async () => {
    await Promise.all([...(serversByDir.get(dir) ?? [])].map((s) => s.kill9()))
    serversByDir.delete(dir)
    await rm(dir, { recursive: true, force: true, maxRetries: 3 })
  })
  return dir
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    // GOALPOST_* come from the test alone; the server's coverage is not measured here
    if (v !== undefined && !k.startsWith('GOALPOST_') && !/^(NODE_V8_COVERAGE|NODE_OPTIONS|_TAPJS_)/.test(k)) env[k] = v
  }
  return env
}

/**
 * With GOALPOST_TEST_LOG=kafka the suites run the same servers on the Kafka log: every data
 * directory gets its own topics (a restart on the same directory finds its topics again).
 */
async function kafkaModeEnv(dataDir: string): Promise<Record<string, string>> {
  if (process.env.GOALPOST_TEST_LOG !== 'kafka') return {}
  const brokers = (await sharedKafkaBrokers()).join(',')
  return { GOALPOST_LOG: 'kafka', GOALPOST_KAFKA_BROKERS: brokers, GOALPOST_KAFKA_PREFIX: `t-${basename(dataDir)}` }
}

function childEnv(port: number, dataDir: string, extra: Record<string, string | undefined>, kafka: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    ...baseEnv(),
    GOALPOST_HOST: '127.0.0.1',
    GOALPOST_PORT: String(port),
    GOALPOST_DATA_DIR: dataDir,
    GOALPOST_ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    ...kafka,
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

class ServerProcess implements Server {
  readonly url: string
  #out = ''
  #err = ''
  #exit: Promise<void>
  #exited = false
  #lastAckAt = 0
  #readyStatuses: number[] = []

  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly adminToken: string | undefined,
    readonly child: ChildProcess,
  ) {
    this.url = `http://127.0.0.1:${port}`
    child.stdout?.on('data', (chunk: Buffer) => { if (this.#out.length < OUTPUT_CAP) this.#out += chunk.toString() })
    child.stderr?.on('data', (chunk: Buffer) => { if (this.#err.length < OUTPUT_CAP) this.#err += chunk.toString() })
    this.#exit = new Promise((resolve) => child.once('exit', () => { this.#exited = true; resolve() }))
  }

  stdout(): string { return this.#out }
  stderr(): string { return this.#err }
  exited(): boolean { return this.#exited }
  readyStatuses(): number[] { return [...this.#readyStatuses] }

  output(): string {
    const tail = (s: string) => (s.length > 8000 ? '…' + s.slice(-8000) : s)
    return `--- stdout ---\n${tail(this.#out)}\n--- stderr ---\n${tail(this.#err)}`
  }

  async waitExit(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
    const done = await Promise.race([this.#exit.then(() => true), timeout])
    clearTimeout(timer)
    return done
  }

  pause(): void {
    if (!this.#exited) this.child.kill('SIGSTOP')
  }

  resume(): void {
    if (!this.#exited) this.child.kill('SIGCONT')
  }

  async stop(): Promise<number | null> {
    if (!this.#exited) {
      // a paused process cannot act on SIGTERM
      this.child.kill('SIGCONT')
      this.child.kill('SIGTERM')
      if (!(await this.waitExit(STOP_TIMEOUT_MS))) {
        this.child.kill('SIGKILL')
        await this.#exit
        throw new Error(`server did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\n${this.output()}`)
      }
    }
    return this.child.exitCode
  }

  async kill9(): Promise<void> {
    if (this.#exited) return
    this.child.kill('SIGKILL')
    await this.#exit
  }

  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    const reply = await send(this.url, method, path, opts)
    if (method === 'POST' && reply.status === 202 && /^\/api\/events?(\?|$)/.test(path)) this.#lastAckAt = Date.now()
    return reply
  }

  admin(method: string, path: string, body?: unknown): Promise<Reply> {
    if (this.adminToken === undefined) throw new Error('this server was started without GOALPOST_ADMIN_TOKEN')
    return this.request(method, path, { token: this.adminToken, body })
  }

  async settle(): Promise<void> {
    const wait = this.#lastAckAt + FRESHNESS_MS + SETTLE_MARGIN_MS - Date.now()
    if (wait > 0) await sleep(wait)
  }

  /** resolves once the server logged that it listens */
  async waitListening(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS
    while (!/"msg":"listening"/.test(this.#out)) {
      if (this.#exited) throw new Error(`server exited (code ${this.child.exitCode}, signal ${this.child.signalCode}) before it listened\n${this.output()}`)
      if (Date.now() > deadline) throw new Error(`server did not listen within ${READY_TIMEOUT_MS} ms\n${this.output()}`)
      await sleep(10)
    }
  }

  async waitReady(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (this.#exited) throw new Error(`server exited (code ${this.child.exitCode}, signal ${this.child.signalCode}) before /readyz answered 200\n${this.output()}`)
      try {
        const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(1000) })
        await res.arrayBuffer()
        this.#readyStatuses.push(res.status)
        if (res.status === 200) return
      } catch {
        // not listening yet
      }
      await sleep(50)
    }
    await this.kill9()
    throw new Error(`server not ready within ${READY_TIMEOUT_MS} ms\n${this.output()}`)
  }
}

const live = new Set<ServerProcess>()
process.once('exit', () => { for (const s of live) s.child.kill('SIGKILL') })

async function launch(dataDir: string, extra: Record<string, string | undefined>): Promise<ServerProcess> {
  const port = await freePort()
  const env = childEnv(port, dataDir, extra, await kafkaModeEnv(dataDir))
  // tap re-adds its coverage loader to NODE_OPTIONS of every child it sees spawned; `env -u` drops it
  // again so that the server runs exactly as `node dist/main.js` would
  const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const server = new ServerProcess(port, dataDir, env.GOALPOST_ADMIN_TOKEN, child)
  live.add(server)
  child.once('exit', () => live.delete(server))
  return server
}

export interface Exited {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Starts `node dist/main.js` expecting it to refuse to start: resolves with its exit code and
 * output once it exits by itself; kills it and rejects if it is still running after `timeoutMs`.
 */
export async function startExpectingExit(opts: Omit<StartOptions, 't'> & { t: Teardown }, timeoutMs = 15_000): Promise<Exited> {
  const dataDir = opts.dataDir ?? (await makeDataDir(opts.t))
  const server = await launch(dataDir, opts.env ?? {})
  if (!(await server.waitExit(timeoutMs))) {
    await server.kill9()
    throw new Error(`the server was still running ${timeoutMs} ms after start; it should have refused to start\n${server.output()}`)
  }
  return { code: server.child.exitCode, stdout: server.stdout(), stderr: server.stderr() }
}

/**
 * Starts `node dist/main.js` on a free port of 127.0.0.1 and waits for `/readyz` to answer 200.
 * A port taken between probing and binding is retried with another one.
 */
export async function startServer(opts: StartOptions = {}): Promise<Server> {
  const ownDir = opts.dataDir === undefined
  const dataDir = opts.dataDir ?? (await makeDataDir())
  let lastError: unknown
  for (let attempt = 0; attempt < 3; attempt++) {
    const server = await launch(dataDir, opts.env ?? {})
    try {
      await (opts.ready === false ? server.waitListening() : server.waitReady())
    } catch (err) {
      lastError = err
      await server.kill9()
      if (/EADDRINUSE|address already in use|cannot listen|failed to listen/i.test(server.output())) continue
      break
    }
    let users = serversByDir.get(dataDir)
    if (!users) serversByDir.set(dataDir, (users = new Set()))
    users.add(server)
    opts.t?.teardown(async () => {
      await server.stop().catch(() => server.kill9())
      if (ownDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 })
    })
    return server
  }
  if (ownDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 })
  throw lastError
}
