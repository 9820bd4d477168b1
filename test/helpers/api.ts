import type { Reply } from './http.js'
import { cookiePair } from './http.js'
import { sleep, type Server } from './server.js'
import { uid, type EventBody } from './fixtures.js'

function unexpected(what: string, reply: Reply, server: Server): Error {
  return new Error(`${what}: HTTP ${reply.status} ${reply.text.slice(0, 500)}\n${server.output()}`)
}

export interface Site {
  site_id: string
  domain?: string | null
  timezone: string
  created_at: string
}

/** Creates a site as admin (a fresh id unless given) and returns its record. */
export async function createSite(server: Server, body: { site_id?: string; domain?: string; timezone?: string } = {}): Promise<Site> {
  const reply = await server.admin('POST', '/api/sites', { site_id: uid('site'), ...body })
  if (reply.status !== 201) throw unexpected('POST /api/sites', reply, server)
  return reply.json as Site
}

export interface Goal {
  id: string
  site_id: string
  name: string
  goal_type: string
  match_event?: string | null
  match_path?: string | null
  created_at: string
}

/** Creates a goal (as admin unless a token is given) and returns its record. */
export async function createGoal(server: Server, body: Record<string, unknown>, token = server.adminToken): Promise<Goal> {
  const reply = await server.request('POST', '/api/goals', { token, body })
  if (reply.status !== 201) throw unexpected('POST /api/goals', reply, server)
  return reply.json as Goal
}

/** Posts a batch (as admin unless a token is given); throws unless it is acknowledged with 202. */
export async function postEvents(server: Server, events: EventBody[], token = server.adminToken): Promise<Reply> {
  const reply = await server.request('POST', '/api/events', { token, body: events })
  if (reply.status !== 202) throw unexpected(`POST /api/events (${events.length} events)`, reply, server)
  return reply
}

/** Posts one event without credentials, as a browser beacon would. */
export function postEvent(server: Server, event: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return server.request('POST', '/api/event', { body: event, headers })
}

export interface User {
  id: string
  email: string
  password: string
  sites: string[]
}

export async function createUser(server: Server, sites: string[], email = `${uid('user')}@example.com`, password = 'correct horse battery'): Promise<User> {
  const reply = await server.admin('POST', '/api/users', { email, password, sites })
  if (reply.status !== 201) throw unexpected('POST /api/users', reply, server)
  return { id: reply.json.id, email, password, sites }
}

/** Logs a user in and returns the `goalpost_session=...` cookie pair. */
export async function login(server: Server, email: string, password: string): Promise<string> {
  const reply = await server.request('POST', '/api/login', { body: { email, password } })
  const cookie = cookiePair(reply, 'goalpost_session')
  if (reply.status !== 200 || !cookie) throw unexpected('POST /api/login', reply, server)
  return cookie
}

/** An API key of a user, created by the admin. */
export async function createKey(server: Server, userId: string): Promise<{ id: string; key: string }> {
  const reply = await server.admin('POST', '/api/keys', { user_id: userId })
  if (reply.status !== 201) throw unexpected('POST /api/keys', reply, server)
  return { id: reply.json.id, key: reply.json.key }
}

/** A user with access to `sites` and an API key of theirs. */
export async function userWithKey(server: Server, sites: string[]): Promise<User & { key: string; keyId: string }> {
  const user = await createUser(server, sites)
  const { id, key } = await createKey(server, user.id)
  return { ...user, key, keyId: id }
}

export interface GoalStats extends Goal {
  conversions: number
  conversion_rate: number
}

export interface GoalsAnswer {
  site_id: string
  days: number
  from: string
  to: string
  timezone: string
  total_sessions: number
  goals: GoalStats[]
}

export function getGoals(server: Server, siteId: string, days?: number, token = server.adminToken): Promise<Reply> {
  const q = days === undefined ? '' : `&days=${days}`
  return server.request('GET', `/api/goals?site_id=${encodeURIComponent(siteId)}${q}`, { token })
}

/**
 * Polls until `until` holds or the time is up, and returns the last value either way so that the
 * caller's assertion shows what the server answered.
 */
export async function pollUntil<T>(read: () => Promise<T>, until: (value: T) => boolean, timeoutMs = 5000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (until(value) || Date.now() >= deadline) return value
    await sleep(everyMs)
  }
}

/**
 * The goals answer once every acknowledged event must be counted (freshness), polled a little longer
 * while `until` does not hold yet, so that exact assertions on it are meaningful both ways.
 */
export async function settledGoals(server: Server, siteId: string, days: number, until: (a: GoalsAnswer) => boolean = () => true): Promise<GoalsAnswer> {
  await server.settle()
  const read = async () => {
    const reply = await getGoals(server, siteId, days)
    if (reply.status !== 200) throw unexpected(`GET /api/goals?site_id=${siteId}&days=${days}`, reply, server)
    return reply.json as GoalsAnswer
  }
  return pollUntil(read, until, 3000)
}

export function goalIn(answer: GoalsAnswer, goalId: string): GoalStats | undefined {
  return answer.goals.find((g) => g.id === goalId)
}

export interface SessionRow {
  session_id: string
  visitor_id: string | null
  user_id: string | null
  entry_page: string | null
  exit_page: string | null
  referrer: string | null
  device: string | null
  browser: string | null
  os: string | null
  duration: number
  started_at: string
  timestamp: string
}

export interface SessionsPage {
  goal_id: string
  days: number
  conversions: number
  sessions: SessionRow[]
  next_cursor: string | null
}

export async function sessionsPage(server: Server, goalId: string, params: Record<string, string | number> = {}): Promise<SessionsPage> {
  const q = new URLSearchParams({ id: goalId })
  for (const [k, v] of Object.entries(params)) q.set(k, String(v))
  const reply = await server.admin('GET', `/api/goals/sessions?${q}`)
  if (reply.status !== 200) throw unexpected(`GET /api/goals/sessions?${q}`, reply, server)
  return reply.json as SessionsPage
}

/** Follows next_cursor to the end; returns the rows in order (at most `maxPages` pages). */
export async function allSessions(server: Server, goalId: string, days: number, limit = 100, maxPages = 50): Promise<SessionRow[]> {
  const rows: SessionRow[] = []
  let cursor: string | null = null
  for (let page = 0; page < maxPages; page++) {
    const params: Record<string, string | number> = { days, limit }
    if (cursor !== null) params.cursor = cursor
    const answer = await sessionsPage(server, goalId, params)
    rows.push(...answer.sessions)
    cursor = answer.next_cursor
    if (cursor === null) return rows
  }
  throw new Error(`more than ${maxPages} pages of sessions for goal ${goalId}`)
}
