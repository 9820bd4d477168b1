import { useEffect, useRef, useState } from 'preact/hooks'
import type { Goal, GoalReport } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { BreakdownTable } from './breakdown-table.js'
import { bars, pointLabel } from './chart.js'
import { count, percent } from './format.js'

interface Props {
  goal: Goal
  days: number
  /** changes whenever the goals' numbers do (the live socket): the report is fetched again */
  version: unknown
  onClose(): void
}

const CHART_WIDTH = 720
const CHART_HEIGHT = 160

/** Hours for the windows of a week or less, days beyond. */
export const intervalFor = (days: number): 'day' | 'hour' => (days <= 7 ? 'hour' : 'day')

/**
 * One goal's report: totals, its conversions over time as a bar chart (each bar titled), and its
 * conversions broken down by an attribute of the sessions.
 */
export function ReportPanel({ goal, days, version, onClose }: Props) {
  const [report, setReport] = useState<GoalReport | null>(null)
  const [error, setError] = useState('')
  const heading = useRef<HTMLHeadingElement>(null)
  const interval = intervalFor(days)

  useEffect(() => heading.current?.focus(), [])
  useEffect(() => {
    let current = true
    api<GoalReport>('GET', `/api/goals/report?${query({ id: goal.id, days, interval })}`).then(
      (r) => current && (setReport(r), setError('')),
      (err) => current && setError(messageOf(err)),
    )
    return () => {
      current = false
    }
  }, [goal.id, days, interval, version])

  const series = report?.series ?? []
  const drawn = bars(series.map((p) => p.conversions), CHART_WIDTH, CHART_HEIGHT)
  const peak = series.reduce((m, p) => Math.max(m, p.conversions), 0)
  return (
    <section id="report-panel" class="card report" aria-labelledby="report-title">
      <div class="section-head">
        <h2 id="report-title" tabIndex={-1} ref={heading}>Report: {goal.name}</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <p class="error" role="alert">{error}</p>
      {report === null ? <p class="summary">Loading…</p> : (
        <>
          <dl class="totals" aria-label="Totals">
            <div><dt>Conversions</dt><dd>{count(report.conversions)}</dd></div>
            <div><dt>Sessions</dt><dd>{count(report.total_sessions)}</dd></div>
            <div><dt>Conversion rate</dt><dd>{percent(report.conversion_rate)}</dd></div>
          </dl>
          <figure class="chart">
            <svg
              viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`} preserveAspectRatio="none" role="img"
              aria-label={`Conversions per ${interval}: ${series.length} ${interval}s, at most ${count(peak)} in one`}
            >
              {drawn.map((b, i) => (
                <rect key={series[i].start} data-point={series[i].start} data-conversions={series[i].conversions} x={b.x} y={b.y} width={b.width} height={b.height}>
                  <title>{`${pointLabel(series[i].start, interval === 'hour')}: ${count(series[i].conversions)} conversions of ${count(series[i].sessions)} sessions`}</title>
                </rect>
              ))}
            </svg>
            <figcaption class="summary">
              Conversions per {interval}, {report.from === report.to ? report.from : `${report.from} to ${report.to}`} ({report.timezone})
            </figcaption>
          </figure>
        </>
      )}
      <BreakdownTable goalId={goal.id} days={days} version={version} />
    </section>
  )
}
