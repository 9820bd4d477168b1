export { EmbeddedLog, type EmbeddedLogOptions } from './embedded-log.js'
export { EmbeddedConfigLog } from './config-log.js'
export { LogError } from '../errors.js'
