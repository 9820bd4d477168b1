import { Command } from 'commander'
import { httpUrl, integer, matching } from './option-parsers.js'

/** Flags of `serve` and the setting each one stands for (they win over the environment). */
const SETTINGS = { port: 'GOALPOST_PORT', host: 'GOALPOST_HOST', dataDir: 'GOALPOST_DATA_DIR', advertiseUrl: 'GOALPOST_ADVERTISE_URL' } as const

export function serveCommand(): Command {
  return new Command('serve')
    .description('run the service (what `npm start` runs); every setting comes from config/ and GOALPOST_* variables')
    .option('--port <port>', 'HTTP port (GOALPOST_PORT)', integer(0, 65_535))
    .option('--host <host>', 'bind address (GOALPOST_HOST)', matching(/^\S+$/, 'an address without spaces'))
    .option('--data-dir <dir>', 'data directory (GOALPOST_DATA_DIR)')
    .option('--advertise-url <url>', 'the URL other nodes reach this one at (GOALPOST_ADVERTISE_URL)', (v) => httpUrl(v).href.replace(/\/$/, ''))
    .action(async function (this: Command) {
      const o = this.opts<Partial<Record<keyof typeof SETTINGS, string | number>>>()
      for (const [flag, env] of Object.entries(SETTINGS)) {
        const value = o[flag as keyof typeof SETTINGS]
        if (value !== undefined) process.env[env] = String(value)
      }
      // the service's own entry point: its wiring stays in one place, and it runs until a signal
      await import('../main.js')
    })
}
