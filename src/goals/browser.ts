/**
 * The pure parts of goal logic that the dashboard bundle shares with the server, so a name or
 * pattern shown in the browser is the one the server will store. The folder's index also carries
 * the processor's state structures (and their WebAssembly hash), which a browser bundle must not pull in.
 */
export { goalName } from './goal-name.js'
export { parsePattern } from './path-pattern.js'
