import { Command } from 'commander'
import { loadConfig } from '../config/index.js'
import { replay } from './replay.js'
import { usageError } from './usage-error.js'

/** `goalpost replay`: the log and its settings come from GOALPOST_* as for `serve`. */
export function replayCommand(): Command {
  return new Command('replay')
    .description('rebuild partition state from the events topic alone into an empty directory, and report events/s')
    .requiredOption('--out <dir>', 'directory whose state/ receives the rebuilt state (must hold none)')
    .option('--data-dir <dir>', 'data directory of the embedded log to replay (GOALPOST_DATA_DIR)')
    .option('--since <instant>', 'fold only records stamped at or after this ISO 8601 instant (default: the earliest retained)')
    .action(async function (this: Command) {
      const o = this.opts<{ out: string; dataDir?: string; since?: string }>()
      if (o.dataDir !== undefined) process.env.GOALPOST_DATA_DIR = o.dataDir
      let since: Date | undefined
      if (o.since !== undefined) {
        since = new Date(o.since)
        if (Number.isNaN(since.getTime())) usageError(this, `--since must be an ISO 8601 instant, got "${o.since}"`)
      }
      await replay(loadConfig(), { out: o.out, since, bar: process.stderr.isTTY === true, print: (line) => process.stdout.write(`${line}\n`) })
    })
}
