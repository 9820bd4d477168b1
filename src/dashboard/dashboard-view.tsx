import { useCallback, useEffect, useState } from 'preact/hooks'
import type { Goal, GoalList, Site, WhoAmI } from '../schema/index.js'
import { api, messageOf, query } from './api.js'
import { WINDOWS, windowSummary } from './format.js'
import { watchGoals, type LiveState } from './live.js'
import { formatViewState, parseViewState, pickSite } from './view-state.js'
import { GoalsTable } from './goals-table.js'
import { GoalForm } from './goal-form.js'
import { SessionsPanel } from './sessions-panel.js'
import { ReportPanel } from './report-panel.js'
import { FunnelsSection } from './funnels-section.js'
import { OverlapPicker } from './overlap-picker.js'
import { SitesAdmin } from './sites-admin.js'
import { UsersAdmin } from './users-admin.js'

interface Props {
  who: WhoAmI
  onLogout(): void
}

const LIVE_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', closed: 'Not live' }

export function DashboardView({ who, onLogout }: Props) {
  const [view, setView] = useState(() => parseViewState(location.hash))
  const [sites, setSites] = useState<Site[] | null>(null)
  const [list, setList] = useState<GoalList | null>(null)
  const [live, setLive] = useState<{ state: LiveState; reason?: string }>({ state: 'connecting' })
  const [expanded, setExpanded] = useState<string | null>(null)
  const [reported, setReported] = useState<string | null>(null)
  const [notice, setNotice] = useState('')
  const siteId = sites ? pickSite(view.siteId, sites.map((s) => s.site_id)) : null

  const loadSites = useCallback(() => {
    api<{ sites: Site[] }>('GET', '/api/sites').then((r) => setSites(r.sites), (err) => setNotice(messageOf(err)))
  }, [])
  useEffect(loadSites, [loadSites])

  useEffect(() => {
    history.replaceState(null, '', formatViewState({ siteId, days: view.days }))
  }, [siteId, view.days])

  useEffect(() => {
    setList(null)
    setExpanded(null)
    setReported(null)
    if (siteId === null) return
    return watchGoals(siteId, view.days, {
      onBody: setList,
      onState: (state, reason) => setLive({ state, reason }),
      onLoggedOut: onLogout,
    })
  }, [siteId, view.days, onLogout])

  // after a change of ours the table is fetched at once; the socket follows within a second
  const refresh = useCallback(() => {
    if (siteId === null) return
    api<GoalList>('GET', `/api/goals?${query({ site_id: siteId, days: view.days })}`).then(setList, (err) => setNotice(messageOf(err)))
  }, [siteId, view.days])

  const logOut = async () => {
    await api('POST', '/api/logout').catch(() => undefined)
    onLogout()
  }

  const rename = async (goal: Goal) => {
    const name = prompt(`New name for "${goal.name}" (leave blank for a generated one)`, goal.name)
    if (name === null) return
    try {
      await api('PATCH', `/api/goals?${query({ id: goal.id })}`, { name })
      setNotice('')
      refresh()
    } catch (err) {
      setNotice(messageOf(err))
    }
  }

  const remove = async (goal: Goal) => {
    if (!confirm(`Delete the goal "${goal.name}"? Its conversions will no longer be shown.`)) return
    try {
      await api('DELETE', `/api/goals?${query({ id: goal.id })}`)
      if (expanded === goal.id) setExpanded(null)
      if (reported === goal.id) setReported(null)
      setNotice('')
      refresh()
    } catch (err) {
      setNotice(messageOf(err))
    }
  }

  const expandedGoal = list?.goals.find((g) => g.id === expanded) ?? null
  const reportedGoal = list?.goals.find((g) => g.id === reported) ?? null
  const goals = list?.goals ?? []

  return (
    <>
      <header class="bar">
        <span class="brand">Goalpost</span>
        <div class="field inline">
          <label for="site">Site</label>
          <select id="site" value={siteId ?? ''} onChange={(e) => setView({ ...view, siteId: e.currentTarget.value })} disabled={!sites?.length}>
            {(sites ?? []).map((s) => <option key={s.site_id} value={s.site_id}>{s.site_id}</option>)}
          </select>
        </div>
        <div class="field inline">
          <label for="window">Window</label>
          <select id="window" value={String(view.days)} onChange={(e) => setView({ ...view, days: Number(e.currentTarget.value) })}>
            {WINDOWS.map((w) => <option key={w.days} value={String(w.days)}>{w.label}</option>)}
          </select>
        </div>
        <span class="who">{who.admin ? 'Administrator' : who.user?.email}</span>
        <button type="button" onClick={logOut}>Log out</button>
      </header>
      <main>
        <p class="error" role="alert">{notice}</p>
        {sites !== null && sites.length === 0 && (
          <p class="empty">{who.admin ? 'No sites yet: add one under Sites below.' : 'You have no sites yet: ask the administrator for access.'}</p>
        )}
        {siteId !== null && (
          <>
            <section aria-labelledby="goals-title">
              <div class="section-head">
                <h2 id="goals-title">Goals</h2>
                <p class={`live live-${live.state}`} role="status">{live.state === 'closed' && live.reason ? `Not live: ${live.reason}` : LIVE_TEXT[live.state]}</p>
              </div>
              <p class="summary">{list ? windowSummary(list) : 'Loading…'}</p>
              <GoalsTable
                goals={list?.goals ?? []}
                expanded={expanded}
                reported={reported}
                onReport={(g) => setReported(reported === g.id ? null : g.id)}
                onSessions={(g) => setExpanded(expanded === g.id ? null : g.id)}
                onRename={rename}
                onDelete={remove}
              />
              {list !== null && list.goals.length === 0 && <p class="empty">No goals yet: create one below.</p>}
            </section>
            {reportedGoal && (
              <ReportPanel key={reportedGoal.id} goal={reportedGoal} days={view.days} version={list} onClose={() => setReported(null)} />
            )}
            {expandedGoal && (
              <SessionsPanel key={`${expandedGoal.id} ${view.days}`} goal={expandedGoal} days={view.days} onClose={() => setExpanded(null)} />
            )}
            <GoalForm siteId={siteId} onCreated={refresh} />
            {list !== null && <FunnelsSection siteId={siteId} days={view.days} goals={goals} version={list} />}
            {list !== null && <OverlapPicker key={siteId} goals={goals} days={view.days} version={list} />}
          </>
        )}
        {who.admin && sites !== null && (
          <>
            <SitesAdmin sites={sites} onChanged={loadSites} />
            <UsersAdmin sites={sites} />
          </>
        )}
      </main>
    </>
  )
}
