import { apiCall, expectStatus } from './api-client.js'
import type { BenchGoal } from './bench-goals.js'

/**
 * Creates the bench's sites and goals through the admin API. Ones that exist already (409) are
 * kept, so a second run against the same service adds to them.
 */
export async function setUpSites(base: URL, adminToken: string, siteIds: readonly string[], goals: readonly BenchGoal[]): Promise<void> {
  for (const site_id of siteIds) {
    const site = await apiCall(base, 'POST', '/api/sites', { token: adminToken, body: { site_id, timezone: 'UTC' } })
    expectStatus(site, [201, 409], `POST /api/sites (${site_id})`)
    for (const g of goals) {
      const goal = await apiCall(base, 'POST', '/api/goals', { token: adminToken, body: { site_id, ...g.body } })
      expectStatus(goal, [201, 409], `POST /api/goals (${site_id})`)
    }
  }
}
