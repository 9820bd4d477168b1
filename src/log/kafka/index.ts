export { KafkaLog, type KafkaLogOptions } from './kafka-log.js'
export { KafkaConfigLog } from './config-log.js'
export { kafkaPartitionOf } from './partitioner.js'
