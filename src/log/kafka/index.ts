export { KafkaLog } from './kafka-log.js'
export { KafkaConfigLog } from './config-log.js'
