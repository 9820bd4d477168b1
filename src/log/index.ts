export type * from './types.js'
export { LogError, LOG_ERRORS, type LogErrorCode } from './errors.js'
export { EmbeddedLog, EmbeddedConfigLog } from './embedded/index.js'
export { KafkaLog, KafkaConfigLog, type KafkaLogOptions } from './kafka/index.js'
