/** The tables `run.mjs` prints, one per bench, each ending in its targets: met or missed. */
import { bytes, int, ms, pct, table } from './lib/table.mjs'

const verdict = (met) => (met ? 'met' : 'MISSED')

export function reportIngest(r) {
  const row = (x) => [x.label, int(x.okPerSec), ms(x.latencyMs.p50), ms(x.latencyMs.p99), int(x.non2xx), int(x.errors), pct(x.serverCpu), pct(x.loadCpu)]
  const runs = []
  r.bare.forEach((b, i) => {
    runs.push(row(b))
    if (r.service[i]) runs.push(row(r.service[i]))
  })
  const b = r.batch
  const batchRows = [
    ['POST /api/events', 'events/s', 'batches/s', 'p50 ms', 'p99 ms', 'non-2xx', 'server core', 'fold lag at end', 'events/s incl. catch-up'],
    [`${r.setup.batchSize}/batch, ${r.setup.batchConnections} conn`, int(b.eventsPerSec), int(b.okPerSec), ms(b.latencyMs.p50, 1), ms(b.latencyMs.p99, 1), int(b.non2xx), pct(b.serverCpu), int(b.lagAtEnd), int(b.foldedEventsPerSec)],
  ]
  const v = r.verification
  const lags = r.service.map((x) => `${int(x.lagAtEnd)} (caught up in ${int(x.catchUpMs)} ms)`).join(', ')
  return [
    `== ingest: POST /api/event (${r.setup.driver}, ${r.setup.connections} connections, ${r.setup.seconds} s runs, data dir on ${r.setup.dataDirFs}, bodies ~${r.setup.meanBodyBytes} B over ${r.setup.sessions} sessions)`,
    table([['run', '202/s', 'p50 ms', 'p99 ms', 'non-2xx', 'sock err', 'server core', 'load core'], ...runs]),
    `service / bare: ${pct(r.ratios.serviceToBare)} (mean of runs; per round ${r.ratios.perRound.map((x) => pct(x)).join(', ')}); latency service / bare: p50 ${ms(r.ratios.p50ServiceToBare, 1)}×, p99 ${ms(r.ratios.p99ServiceToBare, 1)}×`,
    `fold lag (records not yet in state) when each service run ended: ${lags}`,
    '',
    table(batchRows),
    '',
    `counted what it acknowledged: /api/event ${v.single.ok ? 'yes' : 'NO'}, /api/events ${v.batch.ok ? 'yes' : 'NO'}; clean stop: ${v.cleanStop ? 'yes' : 'NO'}`,
    `target service/bare ≥ 60 %: ${verdict(r.ratios.serviceToBare >= 0.6)} (${pct(r.ratios.serviceToBare)})`,
    `target batches ≥ 300k events/s: ${verdict(b.eventsPerSec >= 300_000)} (${int(b.eventsPerSec)})`,
  ].join('\n')
}

export function reportQuery() { return '' }
export function reportMemory() { return '' }
