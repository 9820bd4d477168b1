/** tap's `after`: stops the run's shared Kafka broker (SIGTERM, then SIGKILL) and removes its data. */
import { stopSharedBroker } from './helpers/kafka-broker.js'

await stopSharedBroker()
