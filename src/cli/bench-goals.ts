/**
 * The goals `goalpost bench` creates on each site, each with the test the bench uses to count the
 * conversions it expects from the events the service acknowledged.
 */

/** What a goal test looks at: the event as the bench sends it. */
export interface SentEvent {
  type: string
  path?: string
  event_name?: string
}

export interface BenchGoal {
  body: { goal_type: 'pageview'; match_path: string } | { goal_type: 'custom_event'; match_event: string }
  matches(e: SentEvent): boolean
}

const page = (match_path: string, matches: (path: string) => boolean): BenchGoal => ({
  body: { goal_type: 'pageview', match_path },
  matches: (e) => e.type === 'pageview' && e.path !== undefined && matches(e.path),
})
const event = (match_event: string): BenchGoal => ({
  body: { goal_type: 'custom_event', match_event },
  matches: (e) => e.type === 'custom_event' && e.event_name === match_event,
})

/** In the order they are created; `--goals N` takes the first N. */
export const BENCH_GOALS: readonly BenchGoal[] = [
  page('/checkout/complete', (p) => p === '/checkout/complete'),
  page('/blog/**', (p) => p.startsWith('/blog/')),
  event('signup'),
  page('/pricing', (p) => p === '/pricing'),
  event('add_to_cart'),
  page('/docs/*', (p) => /^\/docs\/[^/]+$/.test(p)),
  event('download'),
  page('/products/**', (p) => p.startsWith('/products/')),
]

/** How a goal shows in reports. */
export const goalLabel = (g: BenchGoal): string => ('match_path' in g.body ? g.body.match_path : `event ${g.body.match_event}`)
