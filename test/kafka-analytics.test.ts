// Kafka mode, two nodes in one group (one broker): the goal report, a breakdown, the overlap and a funnel are
// computed from partials of partitions on both nodes, and either node answers each exactly alike.
import t from 'tap'
import { createGoal, createSite, customEvent, getGoals, pageview, pollUntil, postEvents, startServer, uid, type EventBody, type GoalsAnswer, type Server } from './helpers/index.js'
import { sharedKafkaBrokers } from './helpers/kafka-broker.js'
import { clusterEnv } from './helpers/cluster.js'

const MIN = 60_000

t.test('two nodes answer the report, a breakdown, the overlap and a funnel alike and exactly', async (t) => {
  const env = clusterEnv(await sharedKafkaBrokers(), {
    GOALPOST_KAFKA_SESSION_TIMEOUT_MS: '6000',
    GOALPOST_PARTITIONS: '4',
    GOALPOST_SNAPSHOT_INTERVAL_MS: '500',
  })
  const nodes = [await startServer({ t, env }), await startServer({ t, env })] as [Server, Server]
  const [a, b] = nodes
  const site = (await createSite(a)).site_id
  const pricing = await createGoal(a, { site_id: site, goal_type: 'pageview', match_path: '/pricing' })
  const buy = await createGoal(b, { site_id: site, goal_type: 'custom_event', match_event: 'buy' })
  const funnelReply = await b.admin('POST', '/api/funnels', { site_id: site, steps: [pricing.id, buy.id], window_minutes: 30 })
  t.equal(funnelReply.status, 201, funnelReply.text)
  const funnelId = (funnelReply.json as { id: string }).id

  // 300 sessions over both nodes: all see the pricing page 40 minutes ago; a third buy 10 minutes
  // later (in the funnel's window), a sixth 35 minutes later (past it), and 20 more buy only
  const events: EventBody[] = []
  const at = (ago: number) => new Date(Date.now() - ago * MIN).toISOString()
  let inTime = 0
  let late = 0
  for (let i = 0; i < 300; i++) {
    const s = uid(`k${i}`)
    events.push(pageview(site, s, '/pricing', { timestamp: at(40) }))
    if (i % 3 === 0) {
      events.push(customEvent(site, s, 'buy', { timestamp: at(30) }))
      inTime++
    } else if (i % 6 === 1) {
      events.push(customEvent(site, s, 'buy', { timestamp: at(5) }))
      late++
    }
  }
  for (let i = 0; i < 20; i++) events.push(customEvent(site, uid('only'), 'buy', { timestamp: at(20) }))
  t.equal((await postEvents(a, events.slice(0, 300))).status, 202)
  t.equal((await postEvents(b, events.slice(300))).status, 202)
  const buyers = inTime + late + 20
  const sessions = 320
  for (const n of nodes) {
    const got = await pollUntil(async () => {
      const r = await getGoals(n, site, 2).catch(() => undefined)
      return r?.status === 200 ? (r.json as GoalsAnswer) : undefined
    }, (x) => x?.total_sessions === sessions && x.goals.find((g) => g.id === buy.id)?.conversions === buyers, 30_000, 200)
    t.equal(got?.total_sessions, sessions, `${n.url} has every session`)
  }

  const answers: string[] = []
  for (const n of nodes) {
    const report = await n.admin('GET', `/api/goals/report?id=${buy.id}&days=2&interval=hour`)
    t.equal(report.status, 200, report.text)
    const r = report.json as { conversions: number; total_sessions: number; series: { conversions: number }[] }
    t.equal(r.conversions, buyers, `${n.url}: the report's conversions`)
    t.equal(r.total_sessions, sessions)
    t.ok(r.series.reduce((sum, p) => sum + p.conversions, 0) >= buyers, 'the hours hold every conversion')
    const overlap = await n.admin('GET', `/api/goals/overlap?a=${pricing.id}&b=${buy.id}&days=2`)
    t.same(overlap.json, {
      a: { id: pricing.id, conversions: 300 }, b: { id: buy.id, conversions: buyers },
      both: inTime + late, a_only: 300 - inTime - late, b_only: 20, either: 320,
    }, `${n.url}: the overlap`)
    const funnel = await n.admin('GET', `/api/funnels/report?id=${funnelId}&days=2`)
    t.same((funnel.json as { steps: { sessions: number }[] }).steps.map((s) => s.sessions), [300, inTime], `${n.url}: the funnel`)
    const breakdown = await n.admin('GET', `/api/goals/breakdown?id=${buy.id}&days=2&by=entry_page`)
    t.same(breakdown.json, {
      goal_id: buy.id, days: 2, by: 'entry_page', total_sessions: sessions, conversions: buyers,
      rows: [
        { value: '/pricing', sessions: 300, conversions: inTime + late, conversion_rate: (inTime + late) / 300 },
        { value: null, sessions: 20, conversions: 20, conversion_rate: 1 },
      ],
      other: null,
    }, `${n.url}: the breakdown by entry page`)
    answers.push(JSON.stringify([report.json, overlap.json, funnel.json, breakdown.json]))
  }
  t.equal(answers[0], answers[1], 'both nodes answer byte for byte alike')
  const status = await a.admin('GET', '/api/status')
  const owners = new Set(((status.json as { partitions?: { owner: string }[] }).partitions ?? []).map((p) => p.owner))
  t.equal(owners.size, 2, 'the partitions are spread over both nodes, so every answer merged partials of both')
})
