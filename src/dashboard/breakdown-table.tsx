import { useEffect, useState } from 'preact/hooks'
import type { BreakdownDimension, GoalBreakdown } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { BREAKDOWN_LIMIT, breakdownLines, DIMENSION_LABELS, DIMENSIONS } from './breakdown.js'
import { count, percent } from './format.js'

interface Props {
  goalId: string
  days: number
  /** changes whenever the goals' numbers do (the live socket): the breakdown is fetched again */
  version: unknown
}

/**
 * A goal's conversions by one attribute of the sessions (`GET /api/goals/breakdown`): the values
 * with the most conversions, then the rest summed as "Other". Only an answer for the dimension and
 * window asked is shown, so a table never carries another dimension's rows under its heading.
 */
export function BreakdownTable({ goalId, days, version }: Props) {
  const [by, setBy] = useState<BreakdownDimension>('source')
  const [answer, setAnswer] = useState<GoalBreakdown | null>(null)
  const [error, setError] = useState('')

  useEffect(() => {
    let current = true
    api<GoalBreakdown>('GET', `/api/goals/breakdown?${query({ id: goalId, days, by, limit: BREAKDOWN_LIMIT })}`).then(
      (r) => current && (setAnswer(r), setError('')),
      (err) => current && setError(messageOf(err)),
    )
    return () => {
      current = false
    }
  }, [goalId, days, by, version])

  const shown = answer !== null && answer.by === by && answer.days === days && answer.goal_id === goalId ? answer : null
  const lines = shown ? breakdownLines(shown) : []
  const label = DIMENSION_LABELS[by]
  return (
    <div class="breakdown">
      <div class="section-head">
        <h3>Breakdown</h3>
        <div class="field inline">
          <label for="breakdown-by">Break down by</label>
          <select id="breakdown-by" value={by} onChange={(e) => setBy(e.currentTarget.value as BreakdownDimension)}>
            {DIMENSIONS.map((d) => <option key={d} value={d}>{DIMENSION_LABELS[d]}</option>)}
          </select>
        </div>
      </div>
      <p class="error" role="alert">{error}</p>
      {shown === null ? !error && <p class="summary">Loading…</p> : lines.length === 0 ? <p class="empty">No conversions in this window.</p> : (
        <div class="table-scroll">
          {/* explicit roles keep the table a table for screen readers when phone widths restyle it */}
          <table class="breakdown-table" role="table" aria-label={`Conversions by ${label}`}>
            <thead role="rowgroup">
              <tr role="row">
                <th scope="col" role="columnheader">{label}</th>
                <th scope="col" role="columnheader" class="num">Sessions</th>
                <th scope="col" role="columnheader" class="num">Conversions</th>
                <th scope="col" role="columnheader" class="num">Conversion rate</th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {lines.map((l) => (
                <tr key={l.key} role="row" class={l.other ? 'other' : undefined}>
                  <th scope="row" role="rowheader" class="value">{l.label}</th>
                  <td role="cell" class="num">{count(l.sessions)}</td>
                  <td role="cell" class="num">{count(l.conversions)}</td>
                  <td role="cell" class="num">{percent(l.rate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}
