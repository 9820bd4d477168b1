import type { Catalog } from '../catalog/index.js'

/**
 * Deletes the login records whose cookie has expired (they live 30 days, like the cookie), so
 * that they pile up neither in the config log nor in every node's memory. Returns how many.
 */
export async function pruneLogins(catalog: Catalog, now = Date.now()): Promise<number> {
  const expired = catalog.expiredLogins(now)
  for (const id of expired) await catalog.put('login', id, null)
  return expired.length
}

/** Prunes now and then every `everyMs`; returns a function that stops it. */
export function startLoginPruning(catalog: Catalog, everyMs: number, onError: (err: unknown) => void): () => void {
  const run = () => void pruneLogins(catalog).catch(onError)
  run()
  const timer = setInterval(run, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
