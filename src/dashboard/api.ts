/** An error answer of the API: its status and its `error` sentence, shown to the user as is. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

/**
 * One call to this server's API with the session cookie. Resolves to the parsed body (undefined
 * for a 204); rejects with an ApiError carrying the API's own error sentence.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { 'Content-Type': 'application/json' }
  }
  let res: Response
  try {
    res = await fetch(path, init)
  } catch {
    throw new ApiError(0, 'the server cannot be reached; check the connection and try again')
  }
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!res.ok) {
    const error = (parsed as { error?: unknown } | undefined)?.error
    throw new ApiError(res.status, typeof error === 'string' ? error : `the server answered ${res.status}`)
  }
  return parsed as T
}

export const query = (params: Record<string, string | number>): string =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()

/** The message of anything thrown, for an inline error line. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err))
