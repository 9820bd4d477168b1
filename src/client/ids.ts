/**
 * Visitor, session and user ids. By default in localStorage, shared by the site's tabs; with
 * `data-visitor="none"` in sessionStorage and without a visitor id. Where storage is refused
 * (privacy modes, sandboxed frames) the ids live as long as the page.
 */
const VISITOR = 'goalpost_vid'
const SESSION = 'goalpost_sid'
const USER = 'goalpost_uid'
/** docs/api.md §7: a new session after 30 minutes without an event */
const SESSION_GAP_MS = 30 * 60_000

const memory: Record<string, string> = {}
let area: Storage | undefined

export function useStorage(persistent: boolean): void {
  try {
    area = persistent ? localStorage : sessionStorage
  } catch {
    area = undefined
  }
}

function read(key: string): string | null {
  try {
    if (area) return area.getItem(key)
  } catch {
    // storage or the network may refuse (private mode, a closed page): tracking goes on without it
  }
  return memory[key] ?? null
}

function write(key: string, value: string | null): void {
  try {
    if (area) return value == null ? area.removeItem(key) : area.setItem(key, value)
  } catch {
    // storage or the network may refuse (private mode, a closed page): tracking goes on without it
  }
  if (value == null) delete memory[key]
  else memory[key] = value
}

export const randomId = (): string => Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join('')

export function visitorId(): string {
  let id = read(VISITOR)
  if (!id) write(VISITOR, (id = randomId()))
  return id
}

/** the current session's id; every call counts as activity and moves its 30 minutes on */
export function sessionId(now = Date.now()): string {
  const [id, last] = (read(SESSION) || '').split(' ')
  const current = id && now - Number(last) < SESSION_GAP_MS ? id : randomId()
  write(SESSION, `${current} ${now}`)
  return current
}

export const userId = (): string | undefined => read(USER) ?? undefined
export const setUserId = (id: string | null): void => write(USER, id)
