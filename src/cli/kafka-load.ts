import { Kafka, Partitioners, logLevel } from 'kafkajs'
import type { Answer } from './load-loop.js'
import type { SyntheticStream } from './synthetic-stream.js'
import type { KafkaRecord } from './kafka-record.js'

export interface KafkaTarget {
  brokers: string[]
  /** topics are `<prefix>.events` and so on, as the service names them */
  prefix: string
  timeoutMs: number
}

/**
 * Produces the stream's events into `<prefix>.events` with acks=all, each send one request's
 * events. kafkajs' default partitioner is the Java client's (murmur2 of the key), the one the
 * service's producer uses, so every session lands in the partition the service would pick.
 */
export async function kafkaSender(target: KafkaTarget, stream: SyntheticStream, encode: (body: string) => KafkaRecord) {
  const topic = `${target.prefix}.events`
  const kafka = new Kafka({
    clientId: 'goalpost-bench', brokers: target.brokers, logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(target.timeoutMs, 10_000), requestTimeout: target.timeoutMs,
    // a failed send is a figure in the report, not something to hide behind retries
    retry: { retries: 0 },
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    const topics = await admin.listTopics()
    if (!topics.includes(topic)) {
      throw new Error(`topic ${topic} does not exist on ${target.brokers.join(',')}: start goalpost with GOALPOST_LOG=kafka and GOALPOST_KAFKA_PREFIX=${target.prefix} first`)
    }
  } finally {
    await admin.disconnect()
  }
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false })
  await producer.connect()
  const send = async (first: number, n: number): Promise<Answer> => {
    const messages = new Array<KafkaRecord>(n)
    for (let k = 0; k < n; k++) messages[k] = encode(stream.body(first + k))
    await producer.send({ topic, acks: -1, timeout: target.timeoutMs, messages })
    return { status: 'acked', ok: true }
  }
  return { send, close: () => producer.disconnect() }
}
