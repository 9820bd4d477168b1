export { StreamProcessor, type ProcessorOptions } from './processor.js'
export { goalList, goalSessions, suggestions, decodeCursor, encodeCursor, windowOf, totalSessions, conversions } from './queries.js'
export {
  InteractiveQueries, PartitionsUnavailable,
  type AnyQuery, type PartialAnswer, type PartitionStatus, type RemotePartials,
} from './interactive-queries.js'
export { LogChangelog, ChangelogLost, type Changelog, type ChangelogTopic, type ClaimedChangelog } from './changelog.js'
export { PartitionState, type Dirty } from './partition-state.js'
export { GoalIndex } from './goal-index.js'
export { hashHex, hashKey, hashKeyHex } from './hash-key.js'
export { describeClient } from './device.js'
export type { SessionSummary } from './session-summary.js'
export { rebuild, type RebuildOptions, type RebuildResult } from './rebuild.js'
