export { StreamProcessor, type ProcessorOptions } from './processor.js'
export { goalList, goalSessions, suggestions, decodeCursor, encodeCursor, windowOf, totalSessions, conversions } from './queries.js'
export {
  InteractiveQueries, PartitionsUnavailable,
  type AnyQuery, type PartialAnswer, type PartitionStatus, type RemotePartials,
} from './interactive-queries.js'
export { LogChangelog, type Changelog } from './changelog.js'
export { PartitionState } from './partition-state.js'
export { GoalIndex } from './goal-index.js'
export { describeClient } from './device.js'
export { rebuild, type RebuildOptions, type RebuildResult } from './rebuild.js'
