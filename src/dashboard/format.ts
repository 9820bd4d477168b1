import type { GoalList } from '../schema/index.js'

type GoalRow = GoalList['goals'][number]

/** The windows the dashboard offers, as the Window picker names them. */
export const WINDOWS = [
  { days: 1, label: 'Today' },
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
] as const

/** `0.0972` → `9.7%`; a rate too small for one decimal says so instead of showing 0.0%. */
export function percent(rate: number): string {
  if (rate === 0) return '0%'
  if (rate < 0.0005) return '<0.1%'
  return `${(rate * 100).toFixed(1).replace(/\.0$/, '')}%`
}

export function count(n: number): string {
  return n.toLocaleString('en-US')
}

/** `183000` → `3 min 3 s`; hours above an hour, seconds below a minute. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`
  const h = Math.floor(m / 60)
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`
}

export function goalTypeLabel(goalType: GoalRow['goal_type']): 'Page' | 'Event' {
  return goalType === 'pageview' ? 'Page' : 'Event'
}

/** What a goal matches: its path pattern or its event name. */
export function matchOf(goal: Pick<GoalRow, 'match_path' | 'match_event'>): string {
  return goal.match_path ?? goal.match_event ?? ''
}

/** The line above the table: sessions in the window, its dates and the site's time zone. */
export function windowSummary(list: Pick<GoalList, 'total_sessions' | 'from' | 'to' | 'timezone'>): string {
  const sessions = `${count(list.total_sessions)} ${list.total_sessions === 1 ? 'session' : 'sessions'}`
  const dates = list.from === list.to ? list.from : `${list.from} to ${list.to}`
  return `${sessions}, ${dates} (${list.timezone})`
}

/** A form field's text: FormData also holds files, which no form of ours has. */
export function formText(value: FormDataEntryValue | null): string {
  return typeof value === 'string' ? value : ''
}

/**
 * An exact decimal amount (`"1234.5000"`) in its currency: `€1,234.50`. The string goes to
 * Intl.NumberFormat as it is, which formats decimal strings exactly (no floating point); the
 * currency's own decimals are always shown and up to four when the amount has them. A currency
 * the browser does not know still shows its amount and code.
 */
export function money(amount: string, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: 4 }).format(amount as Intl.StringNumericLiteral)
  } catch {
    return `${amount} ${currency}`
  }
}
