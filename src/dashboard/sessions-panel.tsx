import { useEffect, useRef, useState } from 'preact/hooks'
import type { Goal, SessionList } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { count, duration } from './format.js'

interface Props {
  goal: Goal
  days: number
  onClose(): void
}

const PAGE = 25
const when = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
const orDash = (s: string | null) => s ?? '—'

/** The sessions that converted, newest first, a page at a time ("More" follows the cursor). */
export function SessionsPanel({ goal, days, onClose }: Props) {
  const [rows, setRows] = useState<SessionList['sessions']>([])
  const [total, setTotal] = useState<number | null>(null)
  const [cursor, setCursor] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const heading = useRef<HTMLHeadingElement>(null)

  const load = async (after: string | null) => {
    setBusy(true)
    try {
      const params: Record<string, string | number> = { id: goal.id, days, limit: PAGE }
      if (after) params.cursor = after
      const page = await api<SessionList>('GET', `/api/goals/sessions?${query(params)}`)
      setRows((prev) => (after ? [...prev, ...page.sessions] : page.sessions))
      setTotal(page.conversions)
      setCursor(page.next_cursor)
      setError('')
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  useEffect(() => {
    heading.current?.focus()
    void load(null)
  }, [])

  return (
    <section id="sessions-panel" class="card sessions" aria-labelledby="sessions-title">
      <div class="section-head">
        <h2 id="sessions-title" tabIndex={-1} ref={heading}>Converted sessions: {goal.name}</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <p class="summary" role="status">{total === null ? 'Loading…' : `${count(total)} converted, ${rows.length} shown`}</p>
      <p class="error" role="alert">{error}</p>
      <ol class="session-list" aria-label="Converted sessions">
        {rows.map((s) => (
          <li key={s.session_id}>
            <dl>
              <div><dt>Time</dt><dd><time dateTime={s.timestamp}>{when.format(new Date(s.timestamp))}</time></dd></div>
              <div><dt>Entry page</dt><dd>{orDash(s.entry_page)}</dd></div>
              <div><dt>Exit page</dt><dd>{orDash(s.exit_page)}</dd></div>
              <div><dt>Referrer</dt><dd>{orDash(s.referrer)}</dd></div>
              <div><dt>Device</dt><dd>{orDash(s.device)}</dd></div>
              <div><dt>Browser</dt><dd>{orDash(s.browser)}</dd></div>
              <div><dt>Duration</dt><dd>{duration(s.duration)}</dd></div>
            </dl>
          </li>
        ))}
      </ol>
      {cursor !== null && <button type="button" disabled={busy} onClick={() => load(cursor)}>More</button>}
    </section>
  )
}
