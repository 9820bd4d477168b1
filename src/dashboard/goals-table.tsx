import { useEffect, useRef } from 'preact/hooks'
import type { GoalList } from '../schema/index.js'
import { count, goalTypeLabel, matchOf, money, percent } from './format.js'

type GoalRow = GoalList['goals'][number]

interface Props {
  goals: GoalRow[]
  expanded: string | null
  reported: string | null
  onReport(goal: GoalRow): void
  onSessions(goal: GoalRow): void
  onRename(goal: GoalRow): void
  onDelete(goal: GoalRow): void
}

export const sessionsButtonId = (goalId: string) => `sessions-${goalId}`

/**
 * The goals of the window. The actions column has no header cell on purpose: the column headers
 * are exactly the six data columns, which screen readers announce with every cell. Revenue shows
 * for goals with a currency, the exact total of the window; "—" for the others.
 */
export function GoalsTable({ goals, expanded, reported, onReport, onSessions, onRename, onDelete }: Props) {
  // conversions last shown per goal: a number that changed while watching is highlighted
  const seen = useRef(new Map<string, number>())
  useEffect(() => {
    seen.current = new Map(goals.map((g) => [g.id, g.conversions]))
  }, [goals])
  const bumped = (g: GoalRow) => seen.current.has(g.id) && seen.current.get(g.id) !== g.conversions
  return (
    <div class="table-scroll">
      {/* explicit roles keep the table a table for screen readers when phone widths restyle it */}
      <table class="goals" role="table">
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">Name</th>
            <th scope="col" role="columnheader">Type</th>
            <th scope="col" role="columnheader">Matches</th>
            <th scope="col" role="columnheader" class="num">Conversions</th>
            <th scope="col" role="columnheader" class="num">Conversion rate</th>
            <th scope="col" role="columnheader" class="num">Revenue</th>
            <td role="cell" />
          </tr>
        </thead>
        <tbody role="rowgroup">
          {goals.map((g) => (
            <tr key={g.id} role="row" data-goal-id={g.id}>
              <td role="cell" class="name">
                <button type="button" class="link" aria-expanded={reported === g.id} aria-controls={reported === g.id ? 'report-panel' : undefined} onClick={() => onReport(g)}>{g.name}</button>
              </td>
              <td role="cell" data-label="Type">{goalTypeLabel(g.goal_type)}</td>
              <td role="cell" data-label="Matches"><code>{matchOf(g)}</code></td>
              {/* keyed by value: a changed number is a new cell, which plays the highlight again */}
              <td role="cell" data-label="Conversions" class={bumped(g) ? 'num bumped' : 'num'} key={`c${g.conversions}`}>{count(g.conversions)}</td>
              <td role="cell" data-label="Conversion rate" class="num" key={`r${g.conversion_rate}`}>{percent(g.conversion_rate)}</td>
              <td role="cell" data-label="Revenue" class="num" key={`v${g.revenue?.total ?? ''}`}>{g.revenue ? money(g.revenue.total, g.revenue.currency) : '—'}</td>
              <td role="cell" class="actions">
                <button type="button" id={sessionsButtonId(g.id)} aria-expanded={expanded === g.id} aria-controls={expanded === g.id ? 'sessions-panel' : undefined} onClick={() => onSessions(g)}>Sessions</button>
                <button type="button" onClick={() => onRename(g)}>Rename</button>
                <button type="button" class="danger" onClick={() => onDelete(g)}>Delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
