// docs/api.md §3 and §4 — what goals count: dating in the site time zone, rates, event types, patterns, backfill, windows.
import t from 'tap'
import {
  addDays, createGoal, createSite, customEvent, dateInZone, daysAgo, getGoals, goalIn, minutesAgo, pageview,
  pollUntil, postEvents, settledGoals, startServer, uid, type EventBody, type GoalsAnswer,
} from './helpers/index.js'

const server = await startServer({ t })
const newSite = async (timezone?: string) => (await createSite(server, timezone ? { timezone } : {})).site_id

t.test('events are dated by the calendar day of the site time zone', async (t) => {
  const hoursAgo = [0.05, 3, 6, 9, 12, 15, 18, 21, 26, 30, 36, 44]
  const zones = ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago']
  const now = Date.now()
  const stamps = hoursAgo.map((h) => minutesAgo(h * 60, now))
  const sites: { zone: string; site: string; goal: string }[] = []
  for (const zone of zones) {
    const site = await newSite(zone === 'UTC' ? undefined : zone)
    const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/tz' })
    await postEvents(server, stamps.map((timestamp) => pageview(site, uid('s'), '/tz', { timestamp })))
    sites.push({ zone, site, goal: goal.id })
  }
  for (const { zone, site, goal } of sites) {
    const today = dateInZone(Date.now(), zone)
    for (const days of [1, 2]) {
      const from = addDays(today, -(days - 1))
      const expected = stamps.filter((s) => dateInZone(s, zone) >= from).length
      const answer = await settledGoals(server, site, days, (a) => a.total_sessions >= expected)
      t.equal(answer.total_sessions, expected, `${zone}, days=${days}: sessions dated from ${from}`)
      t.equal(goalIn(answer, goal)?.conversions, expected, `${zone}, days=${days}: conversions`)
    }
  }
})

t.test('conversions and the unrounded conversion_rate', async (t) => {
  const site = await newSite()
  const [one, three, none] = [
    await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'one' }),
    await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/three' }),
    await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/never' }),
  ]
  const sessions = [uid('s'), uid('s'), uid('s')]
  await postEvents(server, [
    pageview(site, sessions[0], '/three'), customEvent(site, sessions[0], 'one'), customEvent(site, sessions[0], 'one'),
    pageview(site, sessions[1], '/three'), pageview(site, sessions[1], '/three/'),
    pageview(site, sessions[2], '/three?again=1'), customEvent(site, sessions[2], 'other'),
  ])
  const answer = await settledGoals(server, site, 7, (a) => a.total_sessions >= 3)
  t.equal(answer.total_sessions, 3)
  t.equal(goalIn(answer, one.id)?.conversions, 1, 'a session converting twice counts once')
  t.equal(goalIn(answer, one.id)?.conversion_rate, 1 / 3, 'unrounded 1/3')
  t.equal(goalIn(answer, three.id)?.conversions, 3)
  t.equal(goalIn(answer, three.id)?.conversion_rate, 1)
  t.equal(goalIn(answer, none.id)?.conversions, 0)
  t.equal(goalIn(answer, none.id)?.conversion_rate, 0)
})

t.test('page goals match pageview events only; event goals custom_event only', async (t) => {
  const site = await newSite()
  const page = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/signup' })
  const event = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'signup' })
  const at = (type: string, extra: EventBody) => ({ type, site_id: site, session_id: uid('s'), timestamp: minutesAgo(2), ...extra })
  await postEvents(server, [
    at('pageview', { path: '/signup' }),
    at('custom_event', { event_name: 'signup', path: '/signup' }),
    at('button_click', { event_name: 'signup', path: '/signup' }),
    at('pageleave', { path: '/signup', duration: 1000 }),
    at('pageview', { path: '/other', event_name: 'signup' }),
    at('custom_event', { event_name: 'Signup' }),
    at('form_submit', { path: '/signup' }),
  ])
  const answer = await settledGoals(server, site, 7, (a) => a.total_sessions >= 7)
  t.equal(answer.total_sessions, 7, 'every accepted type counts as a session')
  t.equal(goalIn(answer, page.id)?.conversions, 1, 'only the pageview of /signup')
  t.equal(goalIn(answer, event.id)?.conversions, 1, 'only the custom_event named exactly signup')
})

t.test('path patterns (§4) end to end', async (t) => {
  const site = await newSite()
  const patterns = ['/blog/*', '/blog/**', '/docs/**/intro', '/pricing', '/', '/Case', '/%7Euser', '/a/*/c']
  const goals = new Map<string, string>()
  for (const p of patterns) goals.set(p, (await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: p })).id)
  // each visited path, and the patterns it must complete
  const visits: [EventBody, string[]][] = [
    [{ path: '/blog' }, []], [{ path: '/blog/' }, []],
    [{ path: '/blog/a' }, ['/blog/*', '/blog/**']], [{ path: '/blog/a/' }, ['/blog/*', '/blog/**']],
    [{ path: '/blog/a?x=1' }, ['/blog/*', '/blog/**']],
    [{ path: '/blog/a/b' }, ['/blog/**']], [{ path: '/blog/a/b/c' }, ['/blog/**']],
    [{ path: '/docs/x/intro' }, ['/docs/**/intro']], [{ path: '/docs/x/y/intro' }, ['/docs/**/intro']],
    [{ path: '/docs/intro' }, []], [{ path: '/docs/x/intro/more' }, []],
    [{ path: '/pricing?plan=pro' }, ['/pricing']], [{ path: '/pricing#top' }, ['/pricing']], [{ path: '/pricing/' }, ['/pricing']],
    [{ url: 'https://example.com/pricing/?utm_source=x' }, ['/pricing']],
    [{ path: '/Pricing' }, []], [{ path: '/pricing/extra' }, []], [{ path: '/xpricing' }, []],
    [{ path: '/' }, ['/']], [{ path: '/case' }, []], [{ path: '/Case' }, ['/Case']],
    [{ path: '/%7Euser' }, ['/%7Euser']], [{ path: '/~user' }, []],
    [{ path: '/a/b/c' }, ['/a/*/c']], [{ path: '/a/b/x/c' }, []], [{ path: '/a//c' }, []],
  ]
  await postEvents(server, visits.map(([fields]) => ({ type: 'pageview', site_id: site, session_id: uid('p'), timestamp: minutesAgo(2), ...fields })))
  const answer = await settledGoals(server, site, 7, (a) => a.total_sessions >= visits.length)
  t.equal(answer.total_sessions, visits.length)
  for (const p of patterns) {
    const matching = visits.filter(([, completes]) => completes.includes(p)).map(([f]) => f.path ?? f.url)
    t.equal(goalIn(answer, goals.get(p)!)?.conversions, matching.length, `${p} is completed by ${matching.join(', ')}`)
  }
})

t.test('goals are retroactive: events first, goal after, counted', async (t) => {
  const site = await newSite()
  await postEvents(server, [
    pageview(site, uid('s'), '/retro/'), customEvent(site, uid('s'), 'retro_evt'),
    pageview(site, uid('s'), '/retro', { timestamp: daysAgo(5) }), pageview(site, uid('s'), '/elsewhere'),
  ])
  await settledGoals(server, site, 7, (a) => a.total_sessions >= 4)
  const page = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/retro' })
  const event = await createGoal(server, { site_id: site, goal_type: 'custom_event', match_event: 'retro_evt' })
  const read = async () => (await getGoals(server, site, 7)).json as GoalsAnswer
  const answer = await pollUntil(read, (a) => goalIn(a, page.id)?.conversions === 2 && goalIn(a, event.id)?.conversions === 1, 5000)
  t.equal(goalIn(answer, page.id)?.conversions, 2, 'both earlier visits of /retro, one of them 5 days ago')
  t.equal(goalIn(answer, event.id)?.conversions, 1)
  t.equal(answer.total_sessions, 4)
  t.equal(goalIn(answer, page.id)?.conversion_rate, 0.5)
})

t.test('multi-day windows: a session converting on two days counts once', async (t) => {
  const site = await newSite()
  const goal = await createGoal(server, { site_id: site, goal_type: 'pageview', match_path: '/signup' })
  const [s1, s2, s3, s4, s5, s6] = Array.from({ length: 6 }, () => uid('d'))
  await postEvents(server, [
    pageview(site, s1, '/signup', { timestamp: daysAgo(0, 0, 30) }),
    pageview(site, s2, '/signup', { timestamp: daysAgo(2) }),
    pageview(site, s3, '/signup', { timestamp: daysAgo(1, 23, 50) }),
    pageview(site, s3, '/signup', { timestamp: daysAgo(0, 0, 10) }),
    pageview(site, s4, '/signup', { timestamp: daysAgo(5) }),
    pageview(site, s5, '/', { timestamp: daysAgo(0, 0, 40) }),
    pageview(site, s6, '/', { timestamp: daysAgo(4) }),
  ])
  const expected: [number, number, number][] = [[1, 2, 3], [2, 2, 3], [3, 3, 4], [7, 4, 6], [30, 4, 6]]
  for (const [days, conversions, total] of expected) {
    const answer = await settledGoals(server, site, days, (a) => a.total_sessions >= total)
    t.equal(goalIn(answer, goal.id)?.conversions, conversions, `days=${days}: conversions`)
    t.equal(answer.total_sessions, total, `days=${days}: total_sessions`)
    t.equal(goalIn(answer, goal.id)?.conversion_rate, conversions / total, `days=${days}: rate`)
  }
})
