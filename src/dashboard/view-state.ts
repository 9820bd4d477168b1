import { WINDOWS } from './format.js'

/** The site and window being looked at, kept in the address (`#site=shop&days=7`) across reloads. */
export interface ViewState {
  siteId: string | null
  days: number
}

export const DEFAULT_DAYS = 30

export function parseViewState(hash: string): ViewState {
  const params = new URLSearchParams(hash.replace(/^#/, ''))
  const days = Number(params.get('days'))
  return {
    siteId: params.get('site') || null,
    days: WINDOWS.some((w) => w.days === days) ? days : DEFAULT_DAYS,
  }
}

export function formatViewState(v: ViewState): string {
  const params = new URLSearchParams()
  if (v.siteId) params.set('site', v.siteId)
  params.set('days', String(v.days))
  return `#${params}`
}

/** The site to show: the one asked for when the user may see it, else the first one. */
export function pickSite(wanted: string | null, siteIds: string[]): string | null {
  return wanted !== null && siteIds.includes(wanted) ? wanted : siteIds[0] ?? null
}
