import { useEffect, useState } from 'preact/hooks'
import type { Goal, Suggestions } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { createBody, generatedName, type ConditionDraft, type GoalDraft } from './goal-draft.js'

interface Props {
  siteId: string
  onCreated(goal: Goal): void
}

/** how long typing pauses before suggestions are asked for */
const SUGGEST_DELAY_MS = 150

/**
 * An option whose text is its value gets no `value` attribute from Preact (the property already
 * equals the text); set it anyway, so `option[value=…]` selectors find every suggestion.
 */
const keepValueAttribute = (value: string) => (el: HTMLOptionElement | null) => el?.setAttribute('value', value)

const EMPTY: GoalDraft = { goalType: 'pageview', match: '', name: '', conditions: [], currency: '' }

/** most conditions a goal takes (docs/api.md §3) */
const MAX_CONDITIONS = 8
const OPS: [ConditionDraft['op'], string][] = [['is', 'is'], ['is_not', 'is not'], ['contains', 'contains'], ['exists', 'exists']]

/**
 * The create form. The pattern or event name field suggests what the site has already seen
 * (`GET /api/goals/suggestions`, as a datalist); the Name field's placeholder is the name the
 * server will generate when it is left blank; the API's error is shown under the form.
 */
export function GoalForm({ siteId, onCreated }: Props) {
  const [draft, setDraft] = useState<GoalDraft>(EMPTY)
  const [suggestions, setSuggestions] = useState<Suggestions['suggestions']>([])
  const [error, setError] = useState('')
  const [done, setDone] = useState('')
  const [busy, setBusy] = useState(false)
  const page = draft.goalType === 'pageview'
  const kind = page ? 'path' : 'event'
  const conditions = draft.conditions ?? []
  const setCondition = (i: number, change: Partial<ConditionDraft>) =>
    setDraft({ ...draft, conditions: conditions.map((c, j) => (j === i ? { ...c, ...change } : c)) })

  useEffect(() => {
    let current = true
    const timer = setTimeout(() => {
      api<Suggestions>('GET', `/api/goals/suggestions?${query({ site_id: siteId, kind, q: draft.match.trim(), limit: 20 })}`)
        .then((r) => current && setSuggestions(r.suggestions), () => current && setSuggestions([]))
    }, SUGGEST_DELAY_MS)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [siteId, kind, draft.match])

  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setDone('')
    try {
      const goal = await api<Goal>('POST', '/api/goals', createBody(siteId, draft))
      setDraft({ ...EMPTY, goalType: draft.goalType })
      setError('')
      setDone(`Created "${goal.name}".`)
      onCreated(goal)
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="card" aria-labelledby="new-goal-title">
      <h2 id="new-goal-title">New goal</h2>
      <form class="goal-form" onSubmit={submit} noValidate>
        <div class="field">
          <label for="goal-type">Goal type</label>
          <select id="goal-type" value={draft.goalType} onChange={(e) => setDraft({ ...draft, goalType: e.currentTarget.value as GoalDraft['goalType'] })}>
            <option value="pageview">Page</option>
            <option value="custom_event">Event</option>
          </select>
        </div>
        <div class="field grow">
          <label for="goal-match">{page ? 'Path pattern' : 'Event name'}</label>
          <input
            id="goal-match"
            list="goal-suggestions"
            autocomplete="off"
            spellcheck={false}
            value={draft.match}
            placeholder={page ? '/pricing or /blog/**' : 'signup'}
            aria-describedby="goal-match-help"
            onInput={(e) => setDraft({ ...draft, match: e.currentTarget.value })}
          />
          <datalist id="goal-suggestions">
            {suggestions.map((s) => <option key={s.value} value={s.value} ref={keepValueAttribute(s.value)}>{s.value}</option>)}
          </datalist>
          <p id="goal-match-help" class="hint">
            {page ? '* is one path segment, ** any depth; query and trailing slash are ignored.' : 'The exact name sent with goalpost.track(), case-sensitive.'}
          </p>
        </div>
        {!page && (
          <fieldset class="field grow conditions">
            <legend>Property conditions</legend>
            {conditions.map((c, i) => (
              <div class="condition" key={i}>
                <input aria-label={`Condition ${i + 1} property`} class="condition-key" value={c.key} maxLength={64} placeholder="plan" onInput={(e) => setCondition(i, { key: e.currentTarget.value })} />
                <select aria-label={`Condition ${i + 1} operator`} value={c.op} onChange={(e) => setCondition(i, { op: e.currentTarget.value as ConditionDraft['op'] })}>
                  {OPS.map(([op, label]) => <option key={op} value={op}>{label}</option>)}
                </select>
                <input aria-label={`Condition ${i + 1} values`} class="condition-values" value={c.op === 'exists' ? '' : c.values} disabled={c.op === 'exists'} placeholder={c.op === 'exists' ? 'any value' : 'pro, team'} onInput={(e) => setCondition(i, { values: e.currentTarget.value })} />
                <button type="button" class="remove" aria-label={`Remove condition ${i + 1}`} onClick={() => setDraft({ ...draft, conditions: conditions.filter((_, j) => j !== i) })}>×</button>
              </div>
            ))}
            {conditions.length < MAX_CONDITIONS && (
              <button type="button" class="add-condition" onClick={() => setDraft({ ...draft, conditions: [...conditions, { key: '', op: 'is', values: '' }] })}>Add condition</button>
            )}
            <p class="hint">Optional: all must hold; values are comma-separated, any one may match.</p>
          </fieldset>
        )}
        {!page && (
          <div class="field">
            <label for="goal-currency">Revenue currency</label>
            <input id="goal-currency" class="currency" value={draft.currency ?? ''} maxLength={3} placeholder="EUR" autocomplete="off" onInput={(e) => setDraft({ ...draft, currency: e.currentTarget.value })} />
            <p class="hint">Optional: sums the revenue events carry in it.</p>
          </div>
        )}
        <div class="field grow">
          <label for="goal-name">Name</label>
          <input id="goal-name" value={draft.name} maxLength={256} placeholder={generatedName(draft)} aria-describedby="goal-name-help" onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
          <p id="goal-name-help" class="hint">Optional: left blank, the goal is named as shown.</p>
        </div>
        <div class="field submit">
          <button type="submit" disabled={busy}>Create goal</button>
        </div>
      </form>
      <p class="error" role="alert">{error}</p>
      <p class="done" role="status">{done}</p>
    </section>
  )
}
