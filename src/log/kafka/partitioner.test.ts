import t from 'tap'
import { kafkaPartitionOf } from './partitioner.js'

// key, partitions, partition: computed by the Java client of Kafka 4.1.1
// (Utils.toPositive(Utils.murmur2(key UTF-8 bytes)) % partitions, its default for keyed records)
const JAVA = [
  ['21', 4, 0], ['21', 8, 4], ['21', 12, 0],
  ['foobar', 4, 2], ['foobar', 8, 6], ['foobar', 12, 6],
  ['site:session-1', 4, 1], ['site:session-1', 8, 5], ['site:session-1', 12, 5],
  ['example.com:s4999', 4, 0], ['example.com:s4999', 8, 0], ['example.com:s4999', 12, 4],
  ['ünïcødé:😀', 4, 1], ['ünïcødé:😀', 8, 1], ['ünïcødé:😀', 12, 5],
] as const

t.test('keys land where the Java client puts them', async (t) => {
  for (const [key, partitions, expected] of JAVA) t.equal(kafkaPartitionOf(key, partitions), expected, `${key} of ${partitions}`)
})
