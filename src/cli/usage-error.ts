import type { Command } from 'commander'

/** Exit code of a command line the CLI cannot run, as commander uses for its own checks. */
export const USAGE_EXIT = 2

/** A problem with the flags: commander prints `error: <message>` and the process exits 2. */
export function usageError(cmd: Command, message: string): never {
  cmd.error(`error: ${message}`, { exitCode: USAGE_EXIT, code: 'goalpost.usage' })
}
