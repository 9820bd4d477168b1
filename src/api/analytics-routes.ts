import { fail, type HttpServer, type Request, type Response } from '../http/index.js'
import { BREAKDOWN_DIMENSIONS, BREAKDOWN_MAX_LIMIT, type BreakdownDimension, type Goal, type Site } from '../schema/index.js'
import { accessGoal, answer, catchUp, daysParam, windowQuery } from './goal-routes.js'
import { authenticate, intParam, isResponse, requiredParam, type ApiContext } from './context.js'

/** Hourly points are offered for windows up to a week: 168 points is what a chart can show. */
const MAX_HOURLY_DAYS = 7

export function analyticsRoutes(server: HttpServer, ctx: ApiContext): void {
  const { catalog, queries } = ctx

  server.route('GET', '/api/goals/report', (req) => oneGoal(ctx, req, (days) => {
    const interval = req.query.get('interval') ?? 'day'
    if (interval !== 'day' && interval !== 'hour') return fail('BAD_REQUEST', `interval must be day or hour, got ${JSON.stringify(interval)}`)
    if (interval === 'hour' && days > MAX_HOURLY_DAYS) {
      return fail('BAD_REQUEST', `interval hour is offered for days up to ${MAX_HOURLY_DAYS}, not days=${days}; use interval day`)
    }
    return interval
  }, (goal, site, days, interval) => answer(() => queries.goalReport(goal, site, days, interval))))

  server.route('GET', '/api/goals/breakdown', (req) => oneGoal(ctx, req, () => {
    const by = requiredParam(req, 'by')
    if (isResponse(by)) return by
    if (!(BREAKDOWN_DIMENSIONS as readonly string[]).includes(by)) {
      return fail('BAD_REQUEST', `by must be one of ${BREAKDOWN_DIMENSIONS.join(', ')}, got ${JSON.stringify(by)}`)
    }
    const limit = intParam(req, 'limit', 1, BREAKDOWN_MAX_LIMIT, 10)
    return isResponse(limit) ? limit : { by: by as BreakdownDimension, limit }
  }, (goal, site, days, { by, limit }) => answer(() => queries.goalBreakdown(goal, site, days, by, limit))))

  server.route('GET', '/api/goals/overlap', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const aId = requiredParam(req, 'a')
    if (isResponse(aId)) return aId
    const bId = requiredParam(req, 'b')
    if (isResponse(bId)) return bId
    const days = daysParam(ctx, req)
    if (isResponse(days)) return days
    const known = () => catalog.goals.has(aId) && catalog.goals.has(bId)
    await catalog.catchUp(known)
    const a = accessGoal(ctx, p, aId)
    if (isResponse(a)) return a
    const b = accessGoal(ctx, p, bId)
    if (isResponse(b)) return b
    if (a.site_id !== b.site_id) return fail('BAD_REQUEST', `b must be a goal of site ${a.site_id}, the site of goal a; goal ${b.id} is on site ${b.site_id}`)
    const site = catalog.sites.get(a.site_id)!
    return answer(() => queries.goalOverlap(a, b, site, days))
  })
}

/**
 * One goal's query in docs/api.md §2's order: 401 without credentials; 400 for a bad `id`, `days`
 * or one of the route's own parameters (`params`, given the days); then 404 for a goal the caller
 * cannot see.
 */
async function oneGoal<T>(
  ctx: ApiContext, req: Request, params: (days: number) => T | Response, run: (goal: Goal, site: Site, days: number, params: T) => Response | Promise<Response>,
): Promise<Response> {
  const q = windowQuery(ctx, req, 'id')
  if (isResponse(q)) return q
  const extra = params(q.days)
  if (isResponse(extra)) return extra
  await catchUp(ctx, req)
  const goal = accessGoal(ctx, q.p, q.id)
  if (isResponse(goal)) return goal
  return run(goal, ctx.catalog.sites.get(goal.site_id)!, q.days, extra)
}
