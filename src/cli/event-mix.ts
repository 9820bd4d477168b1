import { EVENT_TYPES, type EventType } from '../schema/index.js'

/** Relative weights of event types, e.g. `pageview=70,custom_event=10`. */
export type EventMix = ReadonlyArray<{ type: EventType; weight: number }>

/** A browsing-like default: mostly pageviews, some engagement, a few vitals and leaves. */
export const DEFAULT_MIX = 'pageview=70,custom_event=10,pageleave=8,web_vitals=5,button_click=4,external_link=3'

/** Parses `type=weight,...`; throws a sentence naming the bad part (the caller names the flag). */
export function parseMix(spec: string): EventMix {
  const mix: { type: EventType; weight: number }[] = []
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z_]+)\s*=\s*(\d+(?:\.\d+)?)$/.exec(part)
    if (!m) throw new Error(`"${part}" is not type=weight`)
    const type = m[1] as EventType
    if (!EVENT_TYPES.includes(type)) throw new Error(`"${m[1]}" is not an event type (one of ${EVENT_TYPES.join(', ')})`)
    if (mix.some((x) => x.type === type)) throw new Error(`${type} is named twice`)
    mix.push({ type, weight: Number(m[2]) })
  }
  const total = mix.reduce((n, x) => n + x.weight, 0)
  if (total <= 0) throw new Error('needs at least one type with a weight above 0')
  return mix.filter((x) => x.weight > 0)
}

/**
 * `slots` event types in the proportions of `mix`, exactly (largest remainder), in a shuffled but
 * reproducible order: the same mix and seed always give the same stream.
 */
export function allocateTypes(mix: EventMix, slots: number, seed = 1): EventType[] {
  const total = mix.reduce((n, x) => n + x.weight, 0)
  const shares = mix.map((x) => (x.weight / total) * slots)
  const counts = shares.map(Math.floor)
  const byRemainder = shares.map((s, i) => ({ i, r: s - Math.floor(s) })).sort((a, b) => b.r - a.r || a.i - b.i)
  for (let left = slots - counts.reduce((a, b) => a + b, 0), k = 0; left > 0; left--, k++) counts[byRemainder[k].i]++
  const types = mix.flatMap((x, i) => Array<EventType>(counts[i]).fill(x.type))
  const random = mulberry32(seed)
  for (let i = types.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[types[i], types[j]] = [types[j], types[i]]
  }
  return types
}

/** A small seeded PRNG (public domain, Tommy Ettinger): reproducible, not for secrets. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
