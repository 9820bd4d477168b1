/**
 * A group member in a process of its own, for tests that kill it (SIGKILL: no LeaveGroup, the
 * group learns only when its session times out). Joins with the arguments below, prints one line
 * `owned <partitions>` after each assignment, and runs until killed.
 *
 *   node --import=@tapjs/typescript/import test/helpers/kafka-member.ts <brokers> <topic> <group> <url> <sessionTimeoutMs>
 */
import { KafkaLog } from '../../src/log/index.js'

const [brokers, topic, group, url, sessionTimeoutMs] = process.argv.slice(2)
const log = await KafkaLog.open({ brokers: brokers.split(','), nodeId: `member-${process.pid}`, sessionTimeoutMs: Number(sessionTimeoutMs) })
await log.createTopic({ name: topic, partitions: 4 })
await log.join(topic, group, { url }, {
  assigned: async (partitions) => {
    process.stdout.write(`owned ${[...partitions].sort((a, b) => a - b).join(',')}\n`)
    return new Map()
  },
  revoked: async () => undefined,
  records: async () => undefined,
})
setInterval(() => undefined, 60_000)
