import type { Send } from './event.js'
import { cut, cutBytes, MAX } from './limits.js'
import { cleanUrl } from './page-url.js'

/** docs/api.md §7: at most 20 error events a page load, repeats left out */
const MAX_ERRORS = 20

/** `error` for uncaught errors and unhandled promise rejections. */
export function trackErrors(send: Send, keepQuery: boolean): void {
  const seen: string[] = []
  const report = (name: string, message: string, stack: unknown, where?: Record<string, string | number | undefined>) => {
    const key = JSON.stringify([name, message, where])
    if (seen.length >= MAX_ERRORS || seen.includes(key)) return
    seen.push(key)
    send('error', {
      error_name: cut(name),
      error_message: cut(message, MAX.text),
      error_stack: typeof stack == 'string' ? cutBytes(stack, MAX.stackBytes) : undefined,
      properties: where as Record<string, string | number>,
    })
  }
  addEventListener('error', (e) => {
    const err = e.error as Error | undefined
    report(err?.name || 'Error', err?.message || e.message, err?.stack, { file: cleanUrl(e.filename, keepQuery), line: e.lineno, column: e.colno })
  })
  addEventListener('unhandledrejection', (e) => {
    const reason: unknown = e.reason
    const isError = reason instanceof Error
    report(isError ? reason.name : 'UnhandledRejection', isError ? reason.message : String(reason), isError ? reason.stack : undefined)
  })
}
