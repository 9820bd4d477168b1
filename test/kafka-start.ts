/**
 * tap's `before`: launches the one Kafka broker the whole run shares (unless GOALPOST_KAFKA_BROKERS
 * names one) and leaves it starting while the first tests run; Kafka tests wait for it to answer
 * (test/helpers/kafka-broker.ts). Fetches the broker's jars with Maven on the first run.
 */
import { launchSharedBroker } from './helpers/kafka-broker.js'

const started = Date.now()
const info = await launchSharedBroker()
if (info) process.stderr.write(`# Kafka broker launching on ${info.brokers} (pid ${info.pid}, ${Date.now() - started} ms to format and spawn)\n`)
