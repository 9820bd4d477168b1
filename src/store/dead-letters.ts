import type { Level } from 'level'
import { K, range } from './keys.js'

/** A record that failed to fold, kept with its error (the `d!` keys, JSON). */
export interface DeadLetter {
  offset: number
  error: string
  value: string
}

export function putDeadLetter(db: Level<string, Buffer>, p: number, offset: number, value: Buffer, error: string): Promise<void> {
  const entry = JSON.stringify({ partition: p, offset, error, value: value.toString('utf8'), at: new Date().toISOString() })
  return db.put(K.deadLetter(p, offset), Buffer.from(entry), { sync: true })
}

export async function readDeadLetters(db: Level<string, Buffer>, p: number): Promise<DeadLetter[]> {
  const out: DeadLetter[] = []
  for await (const [, v] of db.iterator(range(`d!${p}!`))) out.push(JSON.parse(v.toString()) as DeadLetter)
  return out
}
