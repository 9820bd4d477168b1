import t from 'tap'
import { sharedKafkaBrokers } from '../../../test/helpers/kafka-broker.js'
import { logContract, type LogUnderTest } from '../contract.js'
import { KafkaConfigLog, KafkaLog, type KafkaLogOptions } from './index.js'

const brokers = await sharedKafkaBrokers()
let seq = 0

/** Each test gets its own node id and config topic on the shared broker; topics are per test anyway. */
logContract(t, async () => {
  const name = `contract-${process.pid}-${Date.now().toString(36)}-${seq++}`
  const options: KafkaLogOptions = { brokers, nodeId: name, produceTimeoutMs: 10_000 }
  const open = async (): Promise<{ log: KafkaLog; config: KafkaConfigLog }> => {
    const log = await KafkaLog.open(options)
    return { log, config: await KafkaConfigLog.open(log, `${name}.config`) }
  }
  let current = await open()
  const close = async (): Promise<void> => {
    await current.config.close()
    await current.log.close()
  }
  const under: LogUnderTest = {
    ...current,
    cleanup: close,
    async reopen() {
      await close()
      current = await open()
      Object.assign(under, current)
    },
  }
  return under
})
