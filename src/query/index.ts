export { goalList, goalSessions, decodeCursor, windowOf, totalSessions } from './queries.js'
export { toConvertedSession } from './converted-session.js'
export { InteractiveQueries, PartitionsUnavailable, type PartialAnswer, type RemotePartials } from './interactive-queries.js'
