/** The plain-text tables and number formats of the CLI's reports, shared by the benches. */
export { table, int, ms, pct, bytes } from '../../dist/cli/index.js'
