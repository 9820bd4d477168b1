/**
 * Key → partition for Kafka topics: kafkajs' default partitioner, which is the Java client's
 * (murmur2 of the key's UTF-8 bytes, made positive, modulo the partition count). The producer
 * sends every record with the partition this function names, so `partitionFor` and the broker's
 * placement agree by construction, and so do other clients that key the same topic.
 */
import { Partitioners, type PartitionerArgs } from 'kafkajs'

const partitioner = Partitioners.DefaultPartitioner()
const metadataCache: PartitionerArgs['partitionMetadata'][] = []

function metadataOf(partitions: number): PartitionerArgs['partitionMetadata'] {
  let metadata = metadataCache[partitions]
  if (metadata === undefined) {
    metadata = Array.from({ length: partitions }, (_, partitionId) => ({
      partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0],
    }))
    metadataCache[partitions] = metadata
  }
  return metadata
}

export function kafkaPartitionOf(key: string, partitions: number): number {
  return partitioner({ topic: '', partitionMetadata: metadataOf(partitions), message: { key, value: null } })
}
