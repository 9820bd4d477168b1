import { hashHex, hashKeyHex } from '../sketch/index.js'

/*
 * Key layout of the state store (one LevelDB, string keys, Buffer values). <p> is the partition
 * in decimal, <day> the local day number zero-padded to 6 digits so that days sort numerically.
 *
 *   o!<p>                    next offset to fold (decimal text)       written in every snapshot
 *   s!<p>!<hash16>           session summary                          summary-v1 (JSON before it)
 *   g!<p>!<goal>!<day>       one goal's converted sessions of a day    snapshot-v1 goal day
 *   g!<p>!<goal>!<day>!<seq> the sessions of that day changed by one snapshot (a delta; see DayLayout)
 *   m!<p>!<goal>             a goal's multi-day side index             snapshot-v1 multi-day
 *   m!<p>!<goal>!<seq>       its sessions changed by one snapshot (a delta, as for days)
 *   x!<p>!<goal>!<day>       further completion times of that day       times-v1
 *   x!<p>!<goal>!<day>!<seq> the times of that day's sessions changed by one snapshot (a delta)
 *   r!<p>!<goal>!<day>       one goal's revenue events of a day        snapshot-v1 revenue day
 *   w!<p>!<goal>!<day>       one goal's conversions of a day counted by attribute values (JSON, ValueTallies.encodeDay);
 *                            written only when they match the day's stored set, else deleted: counted again at restore
 *   c!<p>!<site>!<day>       distinct sessions of a site and day       snapshot-v1 session counter
 *   h!<p>!<site>!<hour>      distinct sessions of a site and hour       snapshot-v1 session counter
 *   v!<p>!<site>!<day>!<g>:<key> distinct sessions of a combination of     snapshot-v1 session counter
 *                            breakdown values (<g>: the group of attributes, <key>: the combination; may hold `!`)
 *   q!<p>!<goal>!<hour>      one goal's converted sessions of an hour   snapshot-v1 goal day (times 0)
 *   q!<p>!<goal>!<hour>!<seq> the sessions of that hour new in one snapshot (a delta, as for days)
 *   t!<p>!<site>!p|e         suggestion counters: paths | event names  snapshot-v1 top-k
 *   z!<p>!<site>             the time zone the site's days are bucketed in (text)
 *   a!<p>!linked             present once the sessions converting on several days are in every goal's
 *                            side index they belong to (stream/link-across.ts): a restore need not link them again
 *   b!<p>!goal:<id> | b!<p>!site:<id>  a replay of the partition's log for a new goal or a site's new time zone (JSON)
 *   l!<p>                    the changelog's end offset after this store last wrote to it (Kafka mode)
 *   d!<p>!<offset>           a record set aside because it failed to fold (JSON: error, value)
 *
 * <hour> is an `hourKey` (day × 32 + the hour of the local day), zero-padded to 8 digits; hours are
 * kept for the most recent days only.
 *
 * Every key but l! and d! starts with <kind>!<p>!, so a partition's state is one key range per
 * kind, and a snapshot writes one partition's dirty keys and its offset in ONE atomic batch: a
 * restored state always matches the offset it resumes from (Kafka Streams' state store + its
 * checkpoint, collapsed into one write). The same operations go to the changelog topic first.
 */

const pad = (day: number) => String(day).padStart(6, '0')
const seqOf = (seq: number) => String(seq).padStart(10, '0')
export const K = {
  offset: (p: number) => `o!${p}`,
  summary: (p: number, hk: string) => `s!${p}!${hashKeyHex(hk)}`,
  summaryOf: (p: number, hi: number, lo: number) => `s!${p}!${hashHex(hi, lo)}`,
  goalDay: (p: number, goal: string, day: number) => `g!${p}!${goal}!${pad(day)}`,
  goalDelta: (p: number, goal: string, day: number, seq: number) => `g!${p}!${goal}!${pad(day)}!${seqOf(seq)}`,
  multiDay: (p: number, goal: string) => `m!${p}!${goal}`,
  multiDayDelta: (p: number, goal: string, seq: number) => `m!${p}!${goal}!${seqOf(seq)}`,
  goalTimes: (p: number, goal: string, day: number) => `x!${p}!${goal}!${pad(day)}`,
  goalTimesDelta: (p: number, goal: string, day: number, seq: number) => `x!${p}!${goal}!${pad(day)}!${seqOf(seq)}`,
  revenueDay: (p: number, goal: string, day: number) => `r!${p}!${goal}!${pad(day)}`,
  tally: (p: number, goal: string, day: number) => `w!${p}!${goal}!${pad(day)}`,
  counter: (p: number, site: string, day: number) => `c!${p}!${site}!${pad(day)}`,
  value: (p: number, site: string, day: number, key: string) => `v!${p}!${site}!${pad(day)}!${key}`,
  valueDay: (p: number, site: string, day: number) => `v!${p}!${site}!${pad(day)}!`,
  siteHour: (p: number, site: string, hour: number) => `h!${p}!${site}!${String(hour).padStart(8, '0')}`,
  goalHour: (p: number, goal: string, hour: number) => `q!${p}!${goal}!${String(hour).padStart(8, '0')}`,
  goalHourDelta: (p: number, goal: string, hour: number, seq: number) => `q!${p}!${goal}!${String(hour).padStart(8, '0')}!${seqOf(seq)}`,
  topK: (p: number, site: string, kind: 'p' | 'e') => `t!${p}!${site}!${kind}`,
  zone: (p: number, site: string) => `z!${p}!${site}`,
  linked: (p: number) => `a!${p}!linked`,
  replay: (p: number, id: string) => `b!${p}!${id}`,
  changelogEnd: (p: number) => `l!${p}`,
  deadLetter: (p: number, offset: number) => `d!${p}!${String(offset).padStart(16, '0')}`,
}
/** key kinds that belong to a partition's state (and travel through its changelog) */
export const STATE_KINDS = ['o', 's', 'g', 'm', 'x', 'r', 'w', 'c', 'v', 'h', 'q', 't', 'z', 'b', 'a'] as const

/** the keys under a prefix, for LevelDB's iterators */
export const range = (prefix: string) => ({ gt: prefix, lt: `${prefix}\xff` })
