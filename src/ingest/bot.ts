import { isbot } from 'isbot'

// isbot runs one large regular expression (about 2 µs for a browser user agent, measured), and a
// session sends the same user agent with every event: remembering recent answers makes it a lookup.
const CACHE_SIZE = 512
const cache = new Map<string, boolean>()

/** Whether `userAgent` names a crawler, monitor or other non-human client (the isbot list). */
export function isBotAgent(userAgent: string): boolean {
  let answer = cache.get(userAgent)
  if (answer !== undefined) return answer
  answer = isbot(userAgent)
  // oldest first: Map keeps insertion order, so this evicts the entry seen longest ago
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
  cache.set(userAgent, answer)
  return answer
}
