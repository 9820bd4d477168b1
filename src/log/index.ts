export type * from './types.js'
export { EmbeddedLog, EmbeddedConfigLog } from './embedded/index.js'
export { openLog, type OpenedLog } from './open.js'
