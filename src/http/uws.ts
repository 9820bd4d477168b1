import { createRequire } from 'node:module'
import type * as Uws from 'uWebSockets.js'

/**
 * Loads a native uWebSockets.js build. The republished packages silently fall back to a slow
 * JavaScript emulation when their binary does not load (no build for this Node ABI or glibc);
 * running ten times slower without saying so is worse than not starting, so refuse instead.
 * Candidates in order: the name the code imports (npm alias, see package.json), then the
 * btc-vision build used in the container image.
 */
const CANDIDATES = ['uWebSockets.js', '@btc-vision/uwebsockets.js'] as const

export type UwsModule = typeof Uws

function isNative(mod: unknown): mod is UwsModule {
  const app = (mod as { App?: unknown })?.App
  return typeof app === 'function' && Function.prototype.toString.call(app).includes('[native code]')
}

export function loadUws(): UwsModule {
  const require = createRequire(import.meta.url)
  const tried: string[] = []
  const warn = console.warn
  for (const name of CANDIDATES) {
    try {
      // the fallback announces itself on console.warn; the reason is reported below instead
      console.warn = () => {}
      const mod: unknown = require(name)
      if (isNative(mod)) return mod
      tried.push(`${name}: loaded a JavaScript fallback, not the native build`)
    } catch (err) {
      tried.push(`${name}: ${(err as Error).message.split('\n')[0]}`)
    } finally {
      console.warn = warn
    }
  }
  throw new Error(
    `no native uWebSockets.js build loads on Node ${process.version} (${process.platform}-${process.arch}, ABI ${process.versions.modules}).\n  ` +
      tried.join('\n  ') +
      '\nUse Node 20 with glibc >= 2.36, or the container image.',
  )
}
