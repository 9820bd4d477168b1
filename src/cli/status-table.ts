import type { StatusAnswer } from '../schema/index.js'
import { bytes, int, table } from './text-table.js'

const UNASSIGNED = '(unassigned)'

/**
 * GET /api/status as two tables: one row per node (its partitions and their sums), then one per
 * partition. A partition whose owner is not among the members (a rebalance under way) still shows.
 */
export function formatStatus(s: StatusAnswer): string {
  const ownerOf = (o: string) => (o === '' ? UNASSIGNED : o)
  const nodes = s.members.map((m) => ({ label: m.self ? `${m.url} (this node)` : m.url, url: m.url, partitions: m.partitions }))
  for (const p of s.partitions) {
    const owner = ownerOf(p.owner)
    if (!nodes.some((n) => n.url === owner)) nodes.push({ label: owner, url: owner, partitions: [] })
  }
  const nodeRows = nodes.map((n) => {
    const owned = s.partitions.filter((p) => ownerOf(p.owner) === n.url)
    const sum = (f: (p: StatusAnswer['partitions'][number]) => number) => owned.reduce((a, p) => a + f(p), 0)
    const listed = n.partitions.length ? n.partitions : owned.map((p) => p.partition)
    return [n.label, [...listed].sort((a, b) => a - b).join(',') || '-', int(sum((p) => p.lag)), int(sum((p) => p.hot_sessions)), int(sum((p) => p.conversions)), bytes(sum((p) => p.state_bytes))]
  })
  const partitionRows = [...s.partitions].sort((a, b) => a.partition - b.partition).map((p) => [
    String(p.partition), ownerOf(p.owner), int(p.offset), int(p.end), int(p.lag), int(p.hot_sessions), int(p.goals), int(p.conversions), bytes(p.state_bytes),
  ])
  const total = (f: (p: StatusAnswer['partitions'][number]) => number) => s.partitions.reduce((a, p) => a + f(p), 0)
  // a stopped partition is the news of the page: one line each, with why and where
  const stops = [...s.partitions].sort((a, b) => a.partition - b.partition).flatMap((p) => p.stopped
    ? [`partition ${p.partition} STOPPED since ${p.stopped.since} at offset ${p.stopped.offset} of ${p.stopped.topic}, ${int(p.lag)} behind: ${p.stopped.reason}`]
    : [])
  return [
    `${s.node}: ${s.log} log, ${s.members.length} ${s.members.length === 1 ? 'member' : 'members'}, ${s.partitions.length} partitions, lag ${int(total((p) => p.lag))}, state ${bytes(total((p) => p.state_bytes))}`,
    '',
    table([['node', 'partitions', 'lag', 'hot sessions', 'conversions', 'state'], ...nodeRows]),
    '',
    table([['partition', 'owner', 'offset', 'end', 'lag', 'hot sessions', 'goals', 'conversions', 'state'], ...partitionRows]),
    ...(stops.length ? ['', ...stops] : []),
  ].join('\n')
}
