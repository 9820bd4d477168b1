export { EmbeddedLog, type EmbeddedLogOptions } from './embedded-log.js'
export { EmbeddedConfigLog } from './config-log.js'
export { LogError, LOG_ERRORS, type LogErrorCode } from '../errors.js'
export { fnv1a32 } from './partitioner.js'
