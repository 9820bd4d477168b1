import { fail, type HttpServer, type Request, type Response } from '../http/index.js'
import { Authenticator, newId, type Principal } from '../auth/index.js'
import { checker, GoalCreate, GoalPatch, GOAL_TYPE_ALIASES, type Goal, type Site } from '../schema/index.js'
import { checkConditions, goalName, parsePattern } from '../goals/index.js'
import { goalIdentity } from '../catalog/index.js'
import { decodeCursor, PartitionsUnavailable } from '../query/index.js'
import { accessSite, authenticate, intParam, isResponse, readBody, requiredParam, type ApiContext } from './context.js'

const checkCreateShape = checker(GoalCreate)
/** Ajv names array members `match_properties.0.key`; the API spells them `match_properties[0].key`. */
const checkCreate = (value: unknown): ReturnType<typeof checkCreateShape> => {
  if (typeof value === 'object' && value !== null) {
    const body = value as Record<string, unknown>
    for (const key of ['match_properties', 'currency']) if (body[key] === null) delete body[key]
  }
  const r = checkCreateShape(value)
  if (r.ok || !r.error.startsWith('match_properties.')) return r
  return { ok: false, error: r.error.replace(/^[^ ]+/, (field) => field.replace(/\.(\d+)/g, '[$1]')) }
}
const checkPatch = checker(GoalPatch)

/** How long POST /api/goals waits for the retroactive backfill before answering anyway. */
const BACKFILL_WAIT_MS = 10_000

type Match = Pick<Goal, 'goal_type' | 'match_event' | 'match_path' | 'match_properties' | 'currency'>
type CreateBody = typeof GoalCreate.static

function parseMatch(body: CreateBody): Match | Response {
  const type = GOAL_TYPE_ALIASES[body.goal_type]
  if (!type) return fail('BAD_REQUEST', `goal_type must be pageview (or page, path) or custom_event, got ${JSON.stringify(body.goal_type)}`)
  if (type === 'custom_event') {
    const name = body.match_event
    if (name === undefined || name === null || name === '') return fail('BAD_REQUEST', 'match_event is required for a custom_event goal')
    if (name.length > 256) return fail('BAD_REQUEST', 'match_event must be at most 256 characters')
    const conditions = body.match_properties
    const bad = conditions && checkConditions(conditions)
    if (bad) return fail('BAD_REQUEST', bad)
    return {
      goal_type: type,
      match_event: name,
      ...(conditions ? { match_properties: conditions } : {}),
      ...(body.currency ? { currency: body.currency } : {}),
    }
  }
  // docs/api.md §9: conditions and revenue belong to event goals
  if (body.match_properties !== undefined) return fail('BAD_REQUEST', 'match_properties is only allowed on custom_event goals')
  if (body.currency !== undefined) return fail('BAD_REQUEST', 'currency is only allowed on custom_event goals')
  const pattern = body.match_path
  if (pattern === undefined || pattern === null) return fail('BAD_REQUEST', 'match_path is required for a pageview goal')
  if (pattern.length > 2048) return fail('BAD_REQUEST', 'match_path must be at most 2048 characters')
  const parsed = parsePattern(pattern)
  if (!parsed.ok) return fail('BAD_REQUEST', parsed.error)
  return { goal_type: type, match_path: parsed.pattern }
}

const matchOf = (g: Match) => g.match_event ?? g.match_path!

/** A goal the caller may see, or 404 exactly as for an unknown id (docs/api.md §2). */
export function accessGoal(ctx: ApiContext, p: Principal, id: string): Goal | Response {
  const goal = ctx.catalog.goals.get(id)
  return goal && Authenticator.canAccess(p, goal.site_id) && ctx.catalog.sites.has(goal.site_id) ? goal : fail('NOT_FOUND', `goal ${id}`)
}

export function daysParam(ctx: ApiContext, req: Request): number | Response {
  return intParam(req, 'days', 1, ctx.config.retentionDays, Math.min(30, ctx.config.retentionDays))
}

/** A query over partitions that are moving between nodes answers 503: retrying soon gives the whole answer. */
export async function answer(work: () => Promise<unknown>): Promise<Response> {
  try {
    return { status: 200, body: await work() }
  } catch (err) {
    if (err instanceof PartitionsUnavailable) return fail('UNAVAILABLE', err.message, { headers: { 'Retry-After': '1' } })
    throw err
  }
}

/**
 * The checks of `GET /api/goals?site_id=S&days=N` in docs/api.md §2's order (401, 400, 403/404): the
 * site and window it asks for, or the error answer. `WS /api/live` asks the same question.
 */
export function goalsQuery(ctx: ApiContext, req: Request): { site: Site; days: number } | Response {
  const q = windowQuery(ctx, req, 'site_id')
  if (isResponse(q)) return q
  const site = accessSite(ctx, q.p, q.id)
  if (isResponse(site)) return site
  return { site, days: q.days }
}

/**
 * The first checks of a query about one site, goal or funnel over a window of days, in
 * docs/api.md §2's order: 401 without credentials, then 400 for the `name` parameter and `days`.
 */
export function windowQuery(ctx: ApiContext, req: Request, name: string): { p: Principal; id: string; days: number } | Response {
  const p = authenticate(ctx, req)
  if (isResponse(p)) return p
  const id = requiredParam(req, name)
  if (isResponse(id)) return id
  const days = daysParam(ctx, req)
  if (isResponse(days)) return days
  return { p, id, days }
}

/** Waits for the config log when the request names a site or goal this node has not seen yet. */
export function catchUp(ctx: ApiContext, req: Request, siteId = req.query.get('site_id')): Promise<void> {
  const goalId = req.query.get('id')
  const { sites, goals } = ctx.catalog
  return ctx.catalog.catchUp(() => (siteId === null || sites.has(siteId)) && (goalId === null || goals.has(goalId)))
}

export function goalRoutes(server: HttpServer, ctx: ApiContext): void {
  const { catalog, stream, queries } = ctx

  server.route('POST', '/api/goals', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const body = readBody(req, checkCreate)
    if (isResponse(body)) return body
    const match = parseMatch(body)
    if (isResponse(match)) return match
    const rawName = body.name
    if (typeof rawName === 'string' && rawName.trim().length > 256) return fail('BAD_REQUEST', 'name must be at most 256 characters')
    await catchUp(ctx, req, body.site_id)
    const site = accessSite(ctx, p, body.site_id)
    if (isResponse(site)) return site
    const goal: Goal = {
      id: newId(),
      site_id: site.site_id,
      name: goalName(match.goal_type, matchOf(match), rawName, match.match_properties),
      ...match,
      created_at: new Date().toISOString(),
    }
    // a limit on resources (each goal is a backfill and day sets in memory), checked in this node's
    // view: creations racing on several nodes at the limit may pass it by as many as race. A
    // duplicate still answers as a duplicate, with the existing id.
    const max = ctx.config.maxGoalsPerSite
    if (catalog.goalsOf(site.site_id).length >= max && catalog.holder('goal-key', goalIdentity(goal)) === undefined) {
      return fail('CONFLICT', `site ${site.site_id} already has ${max} goals, the most GOALPOST_MAX_GOALS_PER_SITE allows; delete one first`)
    }
    // one writer per (site, type, match), across every node writing the config log
    const twin = await catalog.createUnique('goal-key', goalIdentity(goal), goal.id, () => catalog.put('goal', goal.id, goal))
    if (twin !== null) {
      const extra = match.match_properties || match.currency ? ' with the same property conditions and currency' : ''
      return fail('CONFLICT', `a ${match.goal_type} goal matching ${JSON.stringify(matchOf(match))}${extra} already exists on site ${site.site_id}`, { body: { id: twin } })
    }
    await stream.whenBackfilled(goal.id, BACKFILL_WAIT_MS)
    return { status: 201, body: goal }
  })

  server.route('GET', '/api/goals', async (req) => {
    await catchUp(ctx, req)
    const q = goalsQuery(ctx, req)
    if (isResponse(q)) return q
    return answer(() => queries.goalList(q.site, catalog.goalsOf(q.site.site_id), q.days))
  })

  server.route('PATCH', '/api/goals', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    const body = readBody(req, checkPatch)
    if (isResponse(body)) return body
    if (typeof body.name === 'string' && body.name.trim().length > 256) return fail('BAD_REQUEST', 'name must be at most 256 characters')
    await catchUp(ctx, req)
    const goal = accessGoal(ctx, p, id)
    if (isResponse(goal)) return goal
    const next: Goal = { ...goal, name: goalName(goal.goal_type, matchOf(goal), body.name, goal.match_properties) }
    await catalog.put('goal', id, next)
    return { status: 200, body: next }
  })

  server.route('DELETE', '/api/goals', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    await catchUp(ctx, req)
    const goal = accessGoal(ctx, p, id)
    if (isResponse(goal)) return goal
    // a funnel without one of its steps would answer for another funnel than it was made as
    for (const funnel of catalog.funnelsUsing(id)) await catalog.put('funnel', funnel.id, null)
    await catalog.put('goal', id, null)
    return { status: 204 }
  })

  server.route('GET', '/api/goals/sessions', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    const days = daysParam(ctx, req)
    if (isResponse(days)) return days
    const limit = intParam(req, 'limit', 1, 100, 25)
    if (isResponse(limit)) return limit
    const rawCursor = req.query.get('cursor')
    const cursor = rawCursor ? decodeCursor(rawCursor) : null
    if (rawCursor && !cursor) return fail('BAD_REQUEST', 'cursor is not a cursor this API returned')
    if (cursor?.window && cursor.window.to - cursor.window.from + 1 !== days) {
      return fail('BAD_REQUEST', `cursor belongs to a listing of days=${cursor.window.to - cursor.window.from + 1}, not days=${days}`)
    }
    await catchUp(ctx, req)
    const goal = accessGoal(ctx, p, id)
    if (isResponse(goal)) return goal
    const site = catalog.sites.get(goal.site_id)!
    return answer(() => queries.goalSessions(goal, site, days, limit, cursor))
  })

  server.route('GET', '/api/goals/suggestions', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const siteId = requiredParam(req, 'site_id')
    if (isResponse(siteId)) return siteId
    const kind = req.query.get('kind') ?? 'path'
    if (kind !== 'path' && kind !== 'event') return fail('BAD_REQUEST', 'kind must be path or event')
    const limit = intParam(req, 'limit', 1, 100, 20)
    if (isResponse(limit)) return limit
    await catchUp(ctx, req)
    const site = accessSite(ctx, p, siteId)
    if (isResponse(site)) return site
    return answer(() => queries.suggestions(site, kind, req.query.get('q') ?? '', limit, ctx.config.retentionDays))
  })
}
