/** Bars of a series on a chart of `width` × `height`: each bar's box, scaled to the largest value. */
export interface Bar {
  x: number
  y: number
  width: number
  height: number
}

export function bars(values: readonly number[], width: number, height: number, gap = 1): Bar[] {
  const max = Math.max(1, ...values)
  const step = values.length === 0 ? 0 : width / values.length
  const barWidth = Math.max(1, step - gap)
  return values.map((v, i) => {
    const h = v === 0 ? 0 : Math.max(1, (v / max) * height)
    return { x: i * step, y: height - h, width: barWidth, height: h }
  })
}

/**
 * A point's label for the chart's tooltips and axis: the date of a day, or the date and hour of
 * an hour, read from the `start` the API gives (its local time and offset, as written).
 */
export function pointLabel(start: string, hourly: boolean): string {
  const date = start.slice(0, 10)
  return hourly ? `${date} ${start.slice(11, 16)}` : date
}
