import { useEffect, useState } from 'preact/hooks'
import type { Goal, GoalOverlap } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { count } from './format.js'

interface Props {
  goals: Goal[]
  days: number
  version: unknown
}

/** Two goals' shared sessions: both, either, or one only. */
export function OverlapPicker({ goals, days, version }: Props) {
  const [a, setA] = useState(goals[0]?.id ?? '')
  const [b, setB] = useState(goals[1]?.id ?? '')
  const [answer, setAnswer] = useState<GoalOverlap | null>(null)
  const [error, setError] = useState('')
  const pick = (id: string) => (goals.some((g) => g.id === id) ? id : goals[0]?.id ?? '')
  const ga = pick(a)
  const gb = pick(b)

  useEffect(() => {
    if (!ga || !gb) return
    let current = true
    api<GoalOverlap>('GET', `/api/goals/overlap?${query({ a: ga, b: gb, days })}`).then(
      (r) => current && (setAnswer(r), setError('')),
      (err) => current && setError(messageOf(err)),
    )
    return () => {
      current = false
    }
  }, [ga, gb, days, version])

  const nameOf = (id: string) => goals.find((g) => g.id === id)?.name ?? ''
  return (
    <section aria-labelledby="overlap-title">
      <h2 id="overlap-title">Overlap</h2>
      {goals.length < 2 ? <p class="hint">Overlap compares two goals.</p> : (
        <>
          <div class="row-form">
            <div class="field">
              <label for="overlap-a">First goal</label>
              <select id="overlap-a" value={ga} onChange={(e) => setA(e.currentTarget.value)}>
                {goals.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
              </select>
            </div>
            <div class="field">
              <label for="overlap-b">Second goal</label>
              <select id="overlap-b" value={gb} onChange={(e) => setB(e.currentTarget.value)}>
                {goals.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
              </select>
            </div>
          </div>
          <p class="error" role="alert">{error}</p>
          {answer && answer.a.id === ga && answer.b.id === gb && (
            <dl class="totals overlap" aria-label="Shared sessions">
              <div><dt>Both</dt><dd>{count(answer.both)}</dd></div>
              <div><dt>{nameOf(ga)} only</dt><dd>{count(answer.a_only)}</dd></div>
              <div><dt>{nameOf(gb)} only</dt><dd>{count(answer.b_only)}</dd></div>
              <div><dt>Either</dt><dd>{count(answer.either)}</dd></div>
            </dl>
          )}
        </>
      )}
    </section>
  )
}
