import { randomBytes } from 'node:crypto'
import { BENCH_GOALS } from './bench-goals.js'
import type { EventMix } from './event-mix.js'
import { CLASSES, type StreamShape } from './synthetic-stream.js'

/** The flags of `goalpost bench` after commander parsed each one. */
export interface BenchFlags {
  url?: URL
  kafka?: string[]
  prefix: string
  adminToken?: string
  key?: string
  batch: number
  sites: number
  sitePrefix: string
  goals: number
  mix: EventMix
  eventsPerSession: number
  openSessions: number
  sessions?: number
  connections: number
  duration: number
  timeout: number
  run?: string
  verify: boolean
  verifyTimeout: number
  retentionDays: number
  json: boolean
  progress: boolean
}

export type BenchTarget =
  | { kind: 'http'; url: URL; batch: number; key?: string }
  | { kind: 'kafka'; brokers: string[]; prefix: string; batch: number }

export interface BenchPlan {
  target: BenchTarget
  /** where to create sites and goals first */
  setup?: { url: URL; token: string }
  /** where to read the counts back, or why they are not read */
  verify: { url: URL; token: string; timeoutMs: number } | { skipped: string }
  shape: StreamShape
  connections: number
  durationMs: number
  timeoutMs: number
  retentionDays: number
  json: boolean
  progress: boolean
}

export const siteIdsOf = (prefix: string, sites: number): string[] =>
  sites === 1 ? [prefix] : Array.from({ length: sites }, (_, i) => `${prefix}-${i + 1}`)

/** Checks the flags against each other; a problem is a sentence naming the flags. */
export function planBench(f: BenchFlags): BenchPlan | { error: string } {
  if (!f.url && !f.kafka) return { error: 'give --url (the service, to post events to) or --kafka (brokers, to produce into the topic)' }
  if (f.openSessions % CLASSES !== 0) return { error: `--open-sessions must be a multiple of ${CLASSES}` }
  if (f.sessions !== undefined && f.sessions < CLASSES * f.sites) {
    return { error: `--sessions must be at least ${CLASSES} × --sites: sessions go to sites in blocks of ${CLASSES}` }
  }
  const credential = f.key ?? f.adminToken
  let target: BenchTarget
  if (f.kafka) {
    target = { kind: 'kafka', brokers: f.kafka, prefix: f.prefix, batch: f.batch }
  } else {
    if (f.batch > 1 && !credential) return { error: '--batch posts to /api/events, which needs a credential: give --key or --admin-token' }
    target = { kind: 'http', url: f.url!, batch: f.batch, ...(credential ? { key: credential } : {}) }
  }
  const readToken = f.adminToken ?? f.key
  let verify: BenchPlan['verify']
  if (!f.verify) verify = { skipped: '--no-verify' }
  else if (!f.url) verify = { skipped: 'no --url to read GET /api/goals from' }
  else if (!readToken) verify = { skipped: 'no --admin-token or --key to read GET /api/goals with' }
  else verify = { url: f.url, token: readToken, timeoutMs: f.verifyTimeout * 1000 }
  return {
    target,
    ...(f.url && f.adminToken ? { setup: { url: f.url, token: f.adminToken } } : {}),
    verify,
    shape: {
      siteIds: siteIdsOf(f.sitePrefix, f.sites),
      goals: BENCH_GOALS.slice(0, f.goals),
      mix: f.mix,
      eventsPerSession: f.eventsPerSession,
      openSessions: f.openSessions,
      ...(f.sessions !== undefined ? { sessionPool: f.sessions } : {}),
      run: f.run ?? randomBytes(4).toString('hex'),
    },
    connections: f.connections,
    durationMs: f.duration * 1000,
    timeoutMs: f.timeout * 1000,
    retentionDays: f.retentionDays,
    json: f.json,
    progress: f.progress && !f.json,
  }
}
