/**
 * kill -9 at an arbitrary moment loses nothing acknowledged. The same file is the child: with
 * GOALPOST_KILL_CHILD_DIR set it appends forever and prints, on stdout,
 *   ack <value>                       once the append holding <value> resolved
 *   rec <partition> <offset> <value>  when a subscription delivers it (only durable records are)
 * and the parent kills it mid-stream, reopens the log and checks every printed line against it.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EmbeddedLog } from './index.js'

const CHILD_DIR = 'GOALPOST_KILL_CHILD_DIR'
const TOPIC = 'durable'
const PARTITIONS = 3
const IN_FLIGHT = 48

/** A value that shows corruption: its length and bytes follow from its id. */
function valueFor(id: string): string {
  const n = Number(id.split('-')[1])
  return `${id}|${'x'.repeat(n % 97)}`
}

/** Spreads records over a few dozen keys, so every partition takes writes. */
const keyFor = (id: string): string => `session-${Number(id.split('-')[1]) % 29}`

async function child(dir: string): Promise<void> {
  const log = await EmbeddedLog.open({ dir })
  await log.createTopic({ name: TOPIC, partitions: PARTITIONS })
  const out = (line: string) => process.stdout.write(`${line}\n`) // synchronous on a Linux pipe
  for (let p = 0; p < PARTITIONS; p++) {
    log.subscribe(TOPIC, p, await log.endOffset(TOPIC, p), (records) => {
      for (const r of records) out(`rec ${r.partition} ${r.offset} ${r.value.toString()}`)
    })
  }
  let n = 0
  const run = process.pid
  const appendOne = async (): Promise<void> => {
    for (;;) {
      const ids = Array.from({ length: 1 + (n % 3) }, () => `${run}-${n++}`)
      const records = ids.map((id) => ({ key: keyFor(id), value: Buffer.from(valueFor(id)), timestamp: Date.now() }))
      await log.append(TOPIC, records)
      for (const id of ids) out(`ack ${valueFor(id)}`)
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, appendOne))
}

interface Printed {
  acked: string[]
  delivered: Array<{ partition: number; offset: number; value: string }>
}

/** Runs the child until it has acknowledged `acks` records, then kills it with SIGKILL. */
function runAndKill(dir: string, acks: number): Promise<Printed> {
  const loader = process.execArgv.filter((arg) => arg.includes('typescript') || arg === '--enable-source-maps')
  const proc = spawn(process.execPath, [...loader, fileURLToPath(import.meta.url)], {
    env: { ...process.env, [CHILD_DIR]: dir, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const printed: Printed = { acked: [], delivered: [] }
  let rest = ''
  proc.stdout.setEncoding('utf8')
  proc.stdout.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n')
    rest = lines.pop() ?? '' // a cut last line was never fully printed: ignore it
    for (const line of lines) {
      const [kind, ...fields] = line.split(' ')
      if (kind === 'ack') printed.acked.push(fields[0])
      if (kind === 'rec') printed.delivered.push({ partition: +fields[0], offset: +fields[1], value: fields[2] })
    }
    if (printed.acked.length >= acks && proc.exitCode === null) proc.kill('SIGKILL')
  })
  return new Promise((resolve, reject) => {
    proc.on('error', reject)
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(printed)
      else reject(new Error(`the child exited by itself (code ${code}) after ${printed.acked.length} acks`))
    })
  })
}

async function parent(): Promise<void> {
  const { default: t } = await import('tap')
  const dir = await mkdtemp(join(tmpdir(), 'goalpost-kill-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))

  for (const [round, acks] of [[1, 3000 + Math.floor(Math.random() * 3000)], [2, 2000]] as const) {
    await t.test(`round ${round}: kill -9 after ${acks} acknowledged records`, async (t) => {
      const printed = await runAndKill(dir, acks)
      const log = await EmbeddedLog.open({ dir })
      t.teardown(() => log.close())
      const stored = new Map<string, { partition: number; offset: number }>()
      const wrongPlace: string[] = []
      for (let p = 0; p < PARTITIONS; p++) {
        const end = await log.endOffset(TOPIC, p)
        const records = await log.read(TOPIC, p, 0, end)
        const dense = Array.from({ length: end }, (_, i) => i)
        t.same(records.map((r) => r.offset), dense, `partition ${p} dense 0..${end - 1}`)
        for (const r of records) {
          const value = r.value.toString()
          if (stored.has(value)) wrongPlace.push(`duplicate ${value}`)
          if (value !== valueFor(value.split('|')[0])) wrongPlace.push(`corrupt ${value}`)
          stored.set(value, { partition: p, offset: r.offset })
        }
      }
      t.same(wrongPlace, [], 'no duplicate or corrupt record')
      const lost = printed.acked.filter((value) => !stored.has(value))
      t.same(lost, [], `all ${printed.acked.length} acknowledged records survived`)
      const moved = printed.delivered.filter((d) => {
        const at = stored.get(d.value)
        return at?.partition !== d.partition || at.offset !== d.offset
      })
      t.ok(printed.delivered.length > 0, `${printed.delivered.length} deliveries printed`)
      t.same(moved, [], 'every delivered offset holds exactly the delivered value')
    })
  }
}

const childDir = process.env[CHILD_DIR]
if (childDir) await child(childDir)
else await parent()
