/** The few API calls the CLI makes, with answers it can explain. */

export interface ApiReply {
  status: number
  body: unknown
  text: string
}

export interface CallOptions {
  token?: string
  body?: unknown
  timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 10_000

/** One request; no answer at all (refused, timed out) throws a sentence naming the URL. */
export async function apiCall(base: URL, method: string, path: string, o: CallOptions = {}): Promise<ApiReply> {
  const url = new URL(path, base)
  const headers: Record<string, string> = {}
  if (o.token) headers.authorization = `Bearer ${o.token}`
  if (o.body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(url, {
      method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body),
      signal: AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    })
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } }
    const why = e.name === 'TimeoutError' ? `no answer within ${o.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : (e.cause?.code ?? e.cause?.message ?? e.message)
    throw new Error(`${method} ${url.href}: ${why}`, { cause: err })
  }
  const text = await res.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: res.status, body, text }
}

/** The answer's `error` sentence, else its first characters. */
export function errorOf(r: ApiReply): string {
  const e = (r.body as { error?: unknown } | undefined)?.error
  return typeof e === 'string' ? e : r.text.slice(0, 200)
}

/** Throws unless the answer is one of `expected`, with a sentence saying what the service said. */
export function expectStatus(r: ApiReply, expected: number[], what: string): void {
  if (expected.includes(r.status)) return
  const hint = r.status === 401 ? ' (the token was refused)' : ''
  throw new Error(`${what} answered ${r.status}${hint}: ${errorOf(r)}`)
}
