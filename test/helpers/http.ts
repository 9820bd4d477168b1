/** One HTTP exchange with the server under test, decoded for assertions. */
export interface Reply {
  status: number
  headers: Headers
  text: string
  /** the body parsed as JSON, or undefined when it is empty or not JSON */
  json: any
}

export interface RequestOptions {
  /** a string or bytes are sent as they are; anything else is sent as JSON */
  body?: unknown
  headers?: Record<string, string>
  /** sent as `Authorization: Bearer <token>` */
  token?: string
  /** a `name=value` cookie pair */
  cookie?: string
  timeoutMs?: number
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name)
}

function encodeBody(body: unknown): string | Buffer | undefined {
  if (body === undefined) return undefined
  if (typeof body === 'string') return body
  if (body instanceof Uint8Array) return Buffer.from(body)
  return JSON.stringify(body)
}

/** Sends one request and reads the whole answer; never throws for an HTTP status. */
export async function send(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers }
  const body = encodeBody(opts.body)
  if (body !== undefined && !hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json'
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  if (opts.cookie !== undefined) headers.cookie = opts.cookie
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: body as BodyInit | undefined,
    redirect: 'manual',
    signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
  })
  const text = await res.text()
  let json: unknown
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** The `name=value` pair of a Set-Cookie answer for one cookie name, or undefined. */
export function cookiePair(reply: Reply, name: string): string | undefined {
  const line = setCookieLine(reply, name)
  return line?.split(';')[0]?.trim()
}

/** The whole Set-Cookie line for one cookie name, attributes included. */
export function setCookieLine(reply: Reply, name: string): string | undefined {
  return reply.headers.getSetCookie().find((line) => line.trim().startsWith(`${name}=`))
}
