/** Settles with the promise's outcome, or with `timedOut` once the clock reaches `at`. */
export type Settled<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; error: unknown }

export function settleBy<T>(work: Promise<T>, at: number): Promise<Settled<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, timedOut: true, error: undefined }), Math.max(0, at - Date.now()))
    work.then(
      (value) => (clearTimeout(timer), resolve({ ok: true, value })),
      (error: unknown) => (clearTimeout(timer), resolve({ ok: false, timedOut: false, error })),
    )
  })
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
