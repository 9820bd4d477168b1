/**
 * Path normalization and goal path patterns (docs/api.md §4).
 *
 * `*` matches one or more characters other than `/`; `**` matches one or more characters
 * including `/`; everything else is literal. Matching is case-sensitive and anchored.
 */

/** Longest path an event may carry (docs/api.md §1); a longer pattern could never match. */
export const MAX_PATTERN_LENGTH = 2048

export type ParsedPattern =
  | { ok: true; pattern: string; match: (path: string) => boolean }
  | { ok: false; error: string }

/**
 * Drops query and fragment and trailing slashes (the root `/` stays); percent-encoding is kept.
 *
 * @example
 * normalizePath('/pricing/?plan=pro#faq') // '/pricing'
 */
export function normalizePath(path: string): string {
  let end = path.length
  const q = path.indexOf('?')
  if (q !== -1) end = q
  const h = path.indexOf('#')
  if (h !== -1 && h < end) end = h
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--
  if (end === 0) return '/'
  return end === path.length ? path : path.slice(0, end)
}

/**
 * Validates and compiles a `match_path` pattern once; `match` takes normalized paths.
 *
 * @example
 * const p = parsePattern('/blog/*')
 * if (p.ok) p.match('/blog/a') // true
 */
export function parsePattern(input: string): ParsedPattern {
  if (input.length === 0) return { ok: false, error: 'match_path must not be empty' }
  if (input.charCodeAt(0) !== 0x2f) return { ok: false, error: 'match_path must start with "/"' }
  if (input.includes('***')) {
    return { ok: false, error: 'match_path must not contain "***" (use "*" for one path segment or "**" for any depth)' }
  }
  if (input.length > MAX_PATTERN_LENGTH) {
    return { ok: false, error: `match_path must be at most ${MAX_PATTERN_LENGTH} characters` }
  }
  const pattern = normalizePath(input)
  return { ok: true, pattern, match: compile(pattern) }
}

const ANY = 0
const SEGMENT = 1
type Token = string | typeof ANY | typeof SEGMENT

// Why no RegExp: V8's backtracking engine is polynomial in the number of wildcards on a failing
// match (measured: the pattern /**/**/**/x as ^\/.+\/.+\/.+\/x$ against a 2001-char path takes
// 590 ms; one more ** runs for minutes), and a pattern is user input evaluated for every pageview.
// The matchers below are linear for one wildcard and O(path length × wildcards) beyond that;
// literal paths and a single wildcard (the common goals) are plain string compares.
function compile(pattern: string): (path: string) => boolean {
  const tokens = tokenize(pattern)
  if (tokens.length === 1) return (path) => path === pattern
  // A pattern starts with '/', so its first token is always literal.
  const head = tokens[0] as string
  const last = tokens[tokens.length - 1]
  const tail = typeof last === 'string' ? last : ''
  const wildcards = tokens.filter((t) => typeof t !== 'string').length
  if (wildcards === 1) {
    const noSlash = tokens.includes(SEGMENT)
    const fixed = head.length + tail.length
    return (path) =>
      path.length > fixed &&
      path.startsWith(head) &&
      path.endsWith(tail) &&
      (!noSlash || path.lastIndexOf('/', path.length - tail.length - 1) < head.length)
  }
  let minLength = 0
  for (const t of tokens) minLength += typeof t === 'string' ? t.length : 1
  return (path) => path.length >= minLength && path.startsWith(head) && path.endsWith(tail) && matchTokens(tokens, path)
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = []
  for (const part of pattern.split(/(\*\*|\*)/)) {
    if (part === '**') tokens.push(ANY)
    else if (part === '*') tokens.push(SEGMENT)
    else if (part !== '') tokens.push(part)
  }
  return tokens
}

let reach = new Uint8Array(256)
let next = new Uint8Array(256)

/**
 * Runs the pattern as a set of reachable path positions, token by token: `reach[i]` says the
 * tokens so far can consume exactly `path[0, i)`.
 */
function matchTokens(tokens: readonly Token[], path: string): boolean {
  const n = path.length
  if (reach.length <= n) {
    reach = new Uint8Array(2 * (n + 1))
    next = new Uint8Array(2 * (n + 1))
  }
  let cur = reach
  let nxt = next
  cur.fill(0, 0, n + 1)
  cur[0] = 1
  for (const token of tokens) {
    nxt.fill(0, 0, n + 1)
    let any = false
    if (typeof token === 'string') {
      const len = token.length
      for (let i = 0; i + len <= n; i++) {
        if (cur[i] === 1 && path.startsWith(token, i)) {
          nxt[i + len] = 1
          any = true
        }
      }
    } else {
      let run = false
      for (let i = 0; i < n; i++) {
        if (cur[i] === 1) run = true
        if (token === SEGMENT && path.charCodeAt(i) === 0x2f) run = false
        else if (run) {
          nxt[i + 1] = 1
          any = true
        }
      }
    }
    if (!any) return false
    const t = cur
    cur = nxt
    nxt = t
  }
  return cur[n] === 1
}
