// docs/api.md §1 — rate limits (429 + Retry-After) and backpressure (503 + Retry-After), each on its own server.
import t from 'tap'
import {
  createSite, hasCors, isError, pageview, pollUntil, postEvent, settledGoals, startServer, uid, type Reply,
  type Server,
} from './helpers/index.js'

/** Retry-After is delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterIsValid(value: string | null): boolean {
  if (value === null) return false
  return /^\d+$/.test(value.trim()) || !Number.isNaN(Date.parse(value))
}

async function burst(server: Server, siteIds: string[], n: number): Promise<Reply[]> {
  const replies: Reply[] = []
  for (let i = 0; i < n; i++) replies.push(await postEvent(server, pageview(siteIds[i % siteIds.length], uid('s'), '/')))
  return replies
}

const [perSite, perClient, tight] = await Promise.all([
  startServer({ t, env: { GOALPOST_RATE_LIMIT_SITE: '5' } }),
  startServer({ t, env: { GOALPOST_RATE_LIMIT_CLIENT: '5' } }),
  startServer({ t, env: { GOALPOST_MAX_PENDING: '1' } }),
])

t.test('the per-site rate limit answers 429 with Retry-After, for that site only', async (t) => {
  const [busy, quiet] = [(await createSite(perSite)).site_id, (await createSite(perSite)).site_id]
  const replies = await burst(perSite, [busy], 40)
  const limited = replies.filter((r) => r.status === 429)
  t.ok(limited.length > 0, `some of 40 quick events over 5/s are refused (${limited.length})`)
  t.ok(replies.every((r) => r.status === 202 || r.status === 429), 'every answer is 202 or 429')
  const first = limited[0]
  if (first) {
    isError(t, first, 429)
    t.ok(retryAfterIsValid(first.headers.get('retry-after')), `Retry-After: ${first.headers.get('retry-after')}`)
    hasCors(t, first)
  }
  const other = await postEvent(perSite, pageview(quiet, uid('s'), '/'))
  t.equal(other.status, 202, 'another site is not limited')
  const later = await pollUntil(() => postEvent(perSite, pageview(busy, uid('s'), '/')), (r) => r.status === 202, 4000, 250)
  t.equal(later.status, 202, 'the limited site is accepted again later')
  const accepted = replies.filter((r) => r.status === 202).length + 1
  const answer = await settledGoals(perSite, busy, 2, (a) => a.total_sessions >= accepted)
  t.equal(answer.total_sessions, accepted, 'refused events were not stored')
})

t.test('the per-client rate limit answers 429 with Retry-After across sites', async (t) => {
  const sites = [(await createSite(perClient)).site_id, (await createSite(perClient)).site_id, (await createSite(perClient)).site_id]
  const replies = await burst(perClient, sites, 40)
  const limited = replies.filter((r) => r.status === 429)
  t.ok(limited.length > 0, `some of 40 quick events from one client over 5/s are refused (${limited.length})`)
  if (limited[0]) {
    isError(t, limited[0], 429)
    t.ok(retryAfterIsValid(limited[0].headers.get('retry-after')), `Retry-After: ${limited[0].headers.get('retry-after')}`)
  }
})

t.test('rate limits come before validation and the unknown-site look-up: bad events cost their sender too', async (t) => {
  const site = (await createSite(perClient)).site_id
  // wait out the earlier bursts
  await pollUntil(() => postEvent(perClient, pageview(site, uid('s'), '/')), (r) => r.status === 202, 4000, 250)
  const bad = [] as Reply[]
  for (let i = 0; i < 30; i++) bad.push(await postEvent(perClient, { type: 'pageview', site_id: `nowhere-${i}`, session_id: uid('s') }))
  const statuses = bad.map((r) => r.status)
  t.ok(statuses.includes(429), `a flood of invalid events for unknown sites meets the limit (${[...new Set(statuses)].join(', ')})`)
  t.ok(statuses.every((s) => s === 400 || s === 429), 'each is refused as invalid or as over the limit')
})

t.test('rate limits are off by default', async (t) => {
  const site = (await createSite(tight)).site_id
  const replies = await burst(tight, [site], 40)
  t.notOk(replies.some((r) => r.status === 429), 'no 429 without a limit configured')
})

t.test('a full ingest buffer answers 503 with Retry-After and stores nothing of that request', async (t) => {
  const site = (await createSite(tight)).site_id
  const replies = await Promise.all(Array.from({ length: 150 }, () => postEvent(tight, pageview(site, uid('s'), '/'))))
  const statuses = new Set(replies.map((r) => r.status))
  t.ok([...statuses].every((s) => s === 202 || s === 503), `every answer is 202 or 503 (${[...statuses].join(', ')})`)
  for (const r of replies.filter((r) => r.status === 503).slice(0, 3)) {
    isError(t, r, 503)
    t.ok(retryAfterIsValid(r.headers.get('retry-after')), `Retry-After: ${r.headers.get('retry-after')}`)
    hasCors(t, r)
  }
  t.comment(`${replies.filter((r) => r.status === 503).length} of 150 concurrent events met a full buffer`)
  const after = await postEvent(tight, pageview(site, uid('s'), '/'))
  t.equal(after.status, 202, 'a single event once the buffer drained is accepted')
  const accepted = replies.filter((r) => r.status === 202).length + 1
  const answer = await settledGoals(tight, site, 2, (a) => a.total_sessions >= accepted)
  t.equal(answer.total_sessions, accepted, 'exactly the acknowledged events were stored')
})
