import type { BreakdownDimension, GoalBreakdown } from '../schema/index.js'

/** How many values a breakdown table shows before the rest become its "Other" row. */
export const BREAKDOWN_LIMIT = 10

/** The dimensions in the order the picker offers them, as it names them. */
export const DIMENSION_LABELS: Readonly<Record<BreakdownDimension, string>> = {
  source: 'Source',
  referrer: 'Referrer',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  entry_page: 'Entry page',
  device: 'Device',
  browser: 'Browser',
  os: 'OS',
  country: 'Country',
}

/**
 * The dimensions themselves. Not the schema's BREAKDOWN_DIMENSIONS: a value imported from the
 * schema would bundle TypeBox into the page (the unit test holds the two lists equal).
 */
export const DIMENSIONS = Object.keys(DIMENSION_LABELS) as BreakdownDimension[]

const regions = (() => {
  try {
    return new Intl.DisplayNames(['en-US'], { type: 'region', fallback: 'none' })
  } catch {
    return null
  }
})()

/** `DE` → `Germany (DE)`; a code the browser cannot name stays a code. */
export function countryLabel(code: string): string {
  let name: string | undefined
  try {
    name = regions?.of(code)
  } catch {
    name = undefined
  }
  return name && name !== code ? `${name} (${code})` : code
}

/**
 * What a row's value reads as. A session without the attribute: `Direct` when it came from no
 * other site (source, referrer), `(none)` when its pages carried no such UTM field, `(unknown)`
 * when the attribute could not be told (entry page, device, browser, OS, country).
 */
export function valueLabel(by: BreakdownDimension, value: string | null): string {
  if (value === null) {
    if (by === 'source' || by === 'referrer') return 'Direct'
    return by.startsWith('utm_') ? '(none)' : '(unknown)'
  }
  if (value === '') return '(empty)'
  return by === 'country' ? countryLabel(value) : value
}

export interface BreakdownLine {
  key: string
  label: string
  sessions: number
  conversions: number
  rate: number
  /** the "Other" line: every value beyond the ones shown, summed */
  other: boolean
}

/** The table's lines: one per value, then "Other" when the answer has more values than it lists. */
export function breakdownLines(answer: Pick<GoalBreakdown, 'by' | 'rows' | 'other'>): BreakdownLine[] {
  const lines = answer.rows.map((r): BreakdownLine => ({
    key: r.value === null ? '\u0000null' : `=${r.value}`,
    label: valueLabel(answer.by, r.value),
    sessions: r.sessions,
    conversions: r.conversions,
    rate: r.conversion_rate,
    other: false,
  }))
  if (answer.other) {
    const { sessions, conversions } = answer.other
    lines.push({ key: '\u0000other', label: 'Other', sessions, conversions, rate: sessions === 0 ? 0 : conversions / sessions, other: true })
  }
  return lines
}
