import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError, type OutputConfiguration } from 'commander'
import { benchCommand } from './bench-command.js'
import { replayCommand } from './replay-command.js'
import { serveCommand } from './serve-command.js'
import { statusCommand } from './status-command.js'
import { USAGE_EXIT } from './usage-error.js'

/** Every subcommand, one file each (`<name>-command.ts`), in the order `--help` lists them. */
export const COMMANDS: ReadonlyArray<() => Command> = [serveCommand, replayCommand, benchCommand, statusCommand]

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as { version?: string }
    return pkg.version ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

/**
 * The `goalpost` command line. Commander's exits become thrown CommanderErrors — 0 for help and
 * version, 2 for any command line it cannot run — so that the caller decides how to end.
 */
export function buildProgram(output?: OutputConfiguration): Command {
  const program = new Command('goalpost')
    .description('Goalpost: web-analytics goals and conversions — run the service, benchmark it, inspect it')
    .version(version())
  for (const make of COMMANDS) program.addCommand(make())
  const configure = (cmd: Command) => {
    cmd.exitOverride((err) => {
      throw new CommanderError(err.exitCode === 0 ? 0 : USAGE_EXIT, err.code, err.message)
    })
    if (output) cmd.configureOutput(output)
    const name = cmd === program ? 'goalpost' : `goalpost ${cmd.name()}`
    cmd.showHelpAfterError(`(${name} --help lists its flags)`)
    cmd.commands.forEach(configure)
  }
  configure(program)
  return program
}
