// Concurrent identical creations: exactly one 201, and 409s that carry the winner's id — for
// goals (site, type, normalized match), sites (site id) and users (e-mail in any case).
import t, { type Test } from 'tap'
import { createSite, getGoals, isError, startServer, uid, type Reply } from './helpers/index.js'

const server = await startServer({ t })

function oneCreated(t: Test, replies: Reply[], idOf: (created: Reply) => string): string {
  const statuses = replies.map((r) => r.status)
  const created = replies.filter((r) => r.status === 201)
  t.equal(created.length, 1, `exactly one 201: ${statuses.join(' ')}`)
  t.equal(replies.filter((r) => r.status === 409).length, replies.length - 1, 'every other answer is 409')
  const winner = created[0] ? idOf(created[0]) : ''
  for (const reply of replies.filter((r) => r.status === 409)) {
    isError(t, reply, 409)
    t.equal(reply.json?.id, winner, 'the 409 carries the winner\'s id')
  }
  return winner
}




t.test('8 concurrent identical POST /api/goals: one goal', async (t) => {
  const site = (await createSite(server)).site_id
  const bodies = Array.from({ length: 8 }, (_, i) => ({ site_id: site, goal_type: i % 2 ? 'page' : 'pageview', match_path: i % 3 ? '/pricing/' : '/pricing' }))
  const replies = await Promise.all(bodies.map((body) => server.admin('POST', '/api/goals', body)))
  const winner = oneCreated(t, replies, (r) => r.json.id)
  const listed = (await getGoals(server, site)).json?.goals ?? []
  t.same(listed.map((g: { id: string }) => g.id), [winner], 'listed once')

  const events = await Promise.all(Array.from({ length: 8 }, () =>
    server.admin('POST', '/api/goals', { site_id: site, goal_type: 'custom_event', match_event: 'signup' })))
  oneCreated(t, events, (r) => r.json.id)

  t.equal((await server.admin('DELETE', `/api/goals?id=${winner}`)).status, 204)
  const again = await Promise.all(bodies.slice(0, 4).map((body) => server.admin('POST', '/api/goals', body)))
  const second = oneCreated(t, again, (r) => r.json.id)
  t.not(second, winner, 'a deleted goal frees its match: a new one is created')
})

t.test('6 concurrent identical POST /api/sites: one site', async (t) => {
  const id = uid('site')
  const replies = await Promise.all(Array.from({ length: 6 }, () => server.admin('POST', '/api/sites', { site_id: id })))
  oneCreated(t, replies, (r) => r.json.site_id)
  const sites = (await server.admin('GET', '/api/sites')).json?.sites ?? []
  t.equal(sites.filter((s: { site_id: string }) => s.site_id === id).length, 1)
})

t.test('6 concurrent POST /api/users with one e-mail in any case: one user', async (t) => {
  const local = uid('dup')
  const emails = [`${local}@example.com`, `${local.toUpperCase()}@EXAMPLE.COM`, `${local}@Example.com`]
  const replies = await Promise.all(Array.from({ length: 6 }, (_, i) =>
    server.admin('POST', '/api/users', { email: emails[i % 3], password: 'correct horse battery', sites: [] })))
  oneCreated(t, replies, (r) => r.json.id)
  const users = (await server.admin('GET', '/api/users')).json?.users ?? []
  t.equal(users.filter((u: { email: string }) => u.email.trim().toLowerCase() === `${local}@example.com`.toLowerCase()).length, 1)
})
