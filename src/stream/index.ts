export { StreamProcessor, type ProcessorOptions } from './processor.js'
export { goalList, goalSessions, suggestions, decodeCursor, encodeCursor, windowOf, totalSessions } from './queries.js'
export { PartitionState } from './partition-state.js'
export { describeClient } from './device.js'
