import { useEffect, useState } from 'preact/hooks'
import type { Funnel, FunnelReport, Goal } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { count, formText, percent } from './format.js'

interface Props {
  siteId: string
  days: number
  goals: Goal[]
  /** changes whenever the goals' numbers do (the live socket): reports are fetched again */
  version: unknown
}

const MAX_STEPS = 8

/** The site's funnels, each with a bar per step, and a form to make one from the site's goals. */
export function FunnelsSection({ siteId, days, goals, version }: Props) {
  const [funnels, setFunnels] = useState<Funnel[] | null>(null)
  const [error, setError] = useState('')
  const load = () => {
    api<{ funnels: Funnel[] }>('GET', `/api/funnels?${query({ site_id: siteId })}`).then((r) => setFunnels(r.funnels), (err) => setError(messageOf(err)))
  }
  // a deleted goal takes its funnels with it: the list follows the goals
  useEffect(load, [siteId, goals.length])

  const remove = async (f: Funnel) => {
    if (!confirm(`Delete the funnel "${f.name}"?`)) return
    try {
      await api('DELETE', `/api/funnels?${query({ id: f.id })}`)
      setError('')
      load()
    } catch (err) {
      setError(messageOf(err))
    }
  }

  return (
    <section aria-labelledby="funnels-title">
      <h2 id="funnels-title">Funnels</h2>
      <p class="error" role="alert">{error}</p>
      {funnels !== null && funnels.length === 0 && <p class="empty">No funnels yet: pick goals in order below.</p>}
      <ul class="funnels">
        {(funnels ?? []).map((f) => (
          <li key={f.id}><FunnelChart funnel={f} days={days} version={version} onDelete={() => remove(f)} /></li>
        ))}
      </ul>
      {goals.length >= 2 ? <FunnelForm siteId={siteId} goals={goals} onCreated={load} /> : <p class="hint">A funnel needs at least two goals.</p>}
    </section>
  )
}

function FunnelChart({ funnel, days, version, onDelete }: { funnel: Funnel; days: number; version: unknown; onDelete(): void }) {
  const [report, setReport] = useState<FunnelReport | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    let current = true
    api<FunnelReport>('GET', `/api/funnels/report?${query({ id: funnel.id, days })}`).then(
      (r) => current && (setReport(r), setError('')),
      (err) => current && setError(messageOf(err)),
    )
    return () => {
      current = false
    }
  }, [funnel.id, days, version])
  const first = report?.steps[0]?.sessions ?? 0
  return (
    <article class="funnel" aria-label={`Funnel ${funnel.name}`}>
      <div class="section-head">
        <h3>{funnel.name}</h3>
        <span class="hint">within {funnel.window_minutes} min</span>
        <button type="button" class="danger" onClick={onDelete}>Delete funnel</button>
      </div>
      <p class="error" role="alert">{error}</p>
      <ol class="steps" aria-label="Steps">
        {(report?.steps ?? []).map((s, k) => (
          <li key={`${k}-${s.goal_id}`} data-sessions={s.sessions}>
            <span class="step-name">{k + 1}. {s.name}</span>
            <span class="step-bar" aria-hidden="true"><span style={{ width: `${first === 0 ? 0 : (100 * s.sessions) / first}%` }} /></span>
            <span class="step-numbers">
              {count(s.sessions)} sessions · {percent(s.conversion_rate)}
              {k > 0 && ` · ${percent(s.from_previous)} of the step before, ${count(s.drop_off)} dropped`}
            </span>
          </li>
        ))}
      </ol>
    </article>
  )
}

function FunnelForm({ siteId, goals, onCreated }: { siteId: string; goals: Goal[]; onCreated(): void }) {
  const [steps, setSteps] = useState<string[]>(() => [goals[0].id, goals[1].id])
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  // a goal deleted meanwhile leaves the picker: its step falls back to the first goal
  const valid = steps.map((id) => (goals.some((g) => g.id === id) ? id : goals[0].id))

  const submit = async (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    const name = formText(form.get('name')).trim()
    const minutes = Number(formText(form.get('window_minutes')))
    setBusy(true)
    try {
      await api('POST', '/api/funnels', { site_id: siteId, steps: valid, window_minutes: minutes, ...(name ? { name } : {}) })
      setError('')
      onCreated()
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="row-form funnel-form" onSubmit={submit} aria-label="New funnel">
      {valid.map((id, k) => (
        <div class="field" key={k}>
          <label for={`step-${k}`}>Step {k + 1}</label>
          <select id={`step-${k}`} value={id} onChange={(e) => setSteps(valid.map((s, i) => (i === k ? e.currentTarget.value : s)))}>
            {goals.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
          </select>
        </div>
      ))}
      <div class="field submit step-buttons">
        {valid.length < MAX_STEPS && <button type="button" onClick={() => setSteps([...valid, goals[0].id])}>Add step</button>}
        {valid.length > 2 && <button type="button" onClick={() => setSteps(valid.slice(0, -1))}>Remove step</button>}
      </div>
      <div class="field">
        <label for="funnel-window">Within (minutes)</label>
        <input id="funnel-window" name="window_minutes" type="number" min={1} max={10080} defaultValue="60" required />
      </div>
      <div class="field grow">
        <label for="funnel-name">Funnel name</label>
        <input id="funnel-name" name="name" maxLength={256} placeholder={valid.map((id) => goals.find((g) => g.id === id)?.name).join(' → ')} />
      </div>
      <div class="field submit"><button type="submit" disabled={busy}>Create funnel</button></div>
      <p class="error" role="alert">{error}</p>
    </form>
  )
}
