import t from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { logContract, reopenable } from '../contract.js'
import { KafkaConfigLog, KafkaLog } from './index.js'

let seq = 0

/** Each test gets its own node id and config topic on the shared broker; topics are per test anyway. */
logContract(t, async () => {
  const name = `contract-${process.pid}-${Date.now().toString(36)}-${seq++}`
  return reopenable(async () => {
    const log = await KafkaLog.open({ brokers: await sharedKafkaBrokers(), nodeId: name, produceTimeoutMs: 10_000 })
    return { log, config: await KafkaConfigLog.open(log, `${name}.config`) }
  })
})
