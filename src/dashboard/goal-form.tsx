import { useEffect, useState } from 'preact/hooks'
import type { Goal, Suggestions } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { createBody, generatedName, type GoalDraft } from './goal-draft.js'

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

const EMPTY: GoalDraft = { goalType: 'pageview', match: '', name: '' }

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
