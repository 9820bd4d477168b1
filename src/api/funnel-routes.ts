import { fail, type HttpServer, type Response } from '../http/index.js'
import { Authenticator, newId, type Principal } from '../auth/index.js'
import { checker, FunnelCreate, type Funnel, type Goal } from '../schema/index.js'
import { accessSite, authenticate, isResponse, readBody, requiredParam, type ApiContext } from './context.js'
import { answer, catchUp, windowQuery } from './goal-routes.js'

const checkCreate = checker(FunnelCreate)
const DEFAULT_WINDOW_MINUTES = 60
const MAX_NAME = 256

/** A funnel the caller may see, or 404 exactly as for an unknown id. */
function accessFunnel(ctx: ApiContext, p: Principal, id: string): Funnel | Response {
  const funnel = ctx.catalog.funnels.get(id)
  return funnel && Authenticator.canAccess(p, funnel.site_id) && ctx.catalog.sites.has(funnel.site_id) ? funnel : fail('NOT_FOUND', `funnel ${id}`)
}

/** The steps as goals of the site, or a 400 naming the first step that is not one. */
function stepGoals(ctx: ApiContext, siteId: string, steps: string[]): Goal[] | Response {
  const goals: Goal[] = []
  for (const [i, id] of steps.entries()) {
    const goal = ctx.catalog.goals.get(id)
    if (goal === undefined || goal.site_id !== siteId) return fail('BAD_REQUEST', `steps[${i}] is not a goal of site ${siteId}: ${JSON.stringify(id)}`)
    if (i > 0 && steps[i - 1] === id) return fail('BAD_REQUEST', `steps[${i}] repeats the step before it; a goal may not follow itself`)
    goals.push(goal)
  }
  return goals
}

/** The step names joined by arrows, cut to the name limit. */
function funnelName(goals: Goal[]): string {
  const name = goals.map((g) => g.name).join(' → ')
  return name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME - 1)}…`
}

export function funnelRoutes(server: HttpServer, ctx: ApiContext): void {
  const { catalog, queries } = ctx

  server.route('POST', '/api/funnels', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const body = readBody(req, checkCreate)
    if (isResponse(body)) return body
    const rawName = typeof body.name === 'string' ? body.name.trim() : ''
    if (rawName.length > MAX_NAME) return fail('BAD_REQUEST', `name must be at most ${MAX_NAME} characters`)
    const known = () => catalog.sites.has(body.site_id) && body.steps.every((id) => catalog.goals.has(id))
    await catalog.catchUp(known)
    const site = accessSite(ctx, p, body.site_id)
    if (isResponse(site)) return site
    const goals = stepGoals(ctx, site.site_id, body.steps)
    if (isResponse(goals)) return goals
    const funnel: Funnel = {
      id: newId(),
      site_id: site.site_id,
      name: rawName || funnelName(goals),
      steps: body.steps,
      window_minutes: body.window_minutes ?? DEFAULT_WINDOW_MINUTES,
      created_at: new Date().toISOString(),
    }
    await catalog.put('funnel', funnel.id, funnel)
    return { status: 201, body: funnel }
  })

  server.route('GET', '/api/funnels', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const siteId = requiredParam(req, 'site_id')
    if (isResponse(siteId)) return siteId
    await catchUp(ctx, req)
    const site = accessSite(ctx, p, siteId)
    if (isResponse(site)) return site
    return { status: 200, body: { funnels: catalog.funnelsOf(site.site_id) } }
  })

  server.route('DELETE', '/api/funnels', async (req) => {
    const p = authenticate(ctx, req)
    if (isResponse(p)) return p
    const id = requiredParam(req, 'id')
    if (isResponse(id)) return id
    await catalog.catchUp(() => catalog.funnels.has(id))
    const funnel = accessFunnel(ctx, p, id)
    if (isResponse(funnel)) return funnel
    await catalog.put('funnel', id, null)
    return { status: 204 }
  })

  server.route('GET', '/api/funnels/report', async (req) => {
    const q = windowQuery(ctx, req, 'id')
    if (isResponse(q)) return q
    await catalog.catchUp(() => catalog.funnels.has(q.id))
    const funnel = accessFunnel(ctx, q.p, q.id)
    if (isResponse(funnel)) return funnel
    const site = catalog.sites.get(funnel.site_id)!
    return answer(() => queries.funnelReport(funnel, site, q.days))
  })
}
