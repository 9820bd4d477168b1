import { Command, Option } from 'commander'
import { checker, StatusAnswer } from '../schema/index.js'
import { apiCall, expectStatus } from './api-client.js'
import { httpUrl, positiveSeconds } from './option-parsers.js'
import { formatStatus } from './status-table.js'

const checkStatus = checker(StatusAnswer)

export function statusCommand(): Command {
  return new Command('status')
    .description('show partitions, their owners, offsets, lag and state size per node (GET /api/status)')
    .requiredOption('--url <url>', 'any node of the service', httpUrl)
    .addOption(new Option('--token <token>', 'the admin token').env('GOALPOST_ADMIN_TOKEN').makeOptionMandatory())
    .option('--timeout <seconds>', 'how long to wait for the answer', positiveSeconds, 10)
    .option('--json', 'print the answer as JSON')
    .action(async function (this: Command) {
      const o = this.opts<{ url: URL; token: string; timeout: number; json?: boolean }>()
      const r = await apiCall(o.url, 'GET', '/api/status', { token: o.token, timeoutMs: o.timeout * 1000 })
      if (r.status === 404) throw new Error(`${o.url.origin} has no GET /api/status: it runs an older goalpost`)
      expectStatus(r, [200], 'GET /api/status')
      const checked = checkStatus(r.body)
      if (!checked.ok) throw new Error(`GET /api/status answered an unexpected shape: ${checked.error}`)
      this.configureOutput().writeOut?.(o.json ? `${JSON.stringify(checked.value, null, 2)}\n` : `${formatStatus(checked.value)}\n`)
    })
}
